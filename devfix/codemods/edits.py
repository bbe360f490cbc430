"""Small libcst edits several rules make: add a keyword, call methods on an expression, put
statements into a block (a function's or a loop's body), register a buffer, give a Module class a
method after `__init__` (a `device` property), move a tuple or dict of tensors item by item. Built
here once so every rule formats them alike."""

from __future__ import annotations

import re

import libcst as cst

from devfix.notebooks import MARKER_LINE


def add_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    """`f(a, b)` → `f(a, b, name=value)`, keeping a trailing comma style if there was one; a call
    that already gives `name` (`device=None`) gets the new value there instead."""
    given = next((index for index, arg in enumerate(call.args) if arg.keyword is not None and arg.keyword.value == name), None)
    if given is not None:
        args = list(call.args)
        args[given] = args[given].with_changes(value=cst.parse_expression(value))
        return call.with_changes(args=args)
    new_arg = cst.Arg(
        value=cst.parse_expression(value),
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    args = list(call.args)
    if args:
        last = args[-1]
        if isinstance(last.comma, cst.Comma):
            new_arg = new_arg.with_changes(comma=last.comma)
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elif isinstance(last.whitespace_after_arg, cst.ParenthesizedWhitespace):
            # `f(\n    a\n)`: the line break before `)` follows the new last argument (`a, name=value\n)`)
            new_arg = new_arg.with_changes(whitespace_after_arg=last.whitespace_after_arg)
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                                         whitespace_after_arg=cst.SimpleWhitespace(""))
        else:
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, new_arg])


def without_keyword(call: cst.Call, name: str) -> cst.Call:
    """`f(a, name=x, b=y)` → `f(a, b=y)`; the comma style of the last argument is kept."""
    args = list(call.args)
    index = next(i for i, arg in enumerate(args) if arg.keyword is not None and arg.keyword.value == name)
    removed = args.pop(index)
    if args and index == len(args):  # it was the last one: the new last takes its comma (or none)
        args[-1] = args[-1].with_changes(comma=removed.comma)
    return call.with_changes(args=args)


DEVICE_PROPERTY = "@property\ndef device(self):\n    return next(self.parameters()).device\n"


def add_device_property(class_node: cst.ClassDef) -> cst.ClassDef:
    """The class with a `device` property derived from its parameters, right after `__init__`
    (a stored `self.device` would go stale after `.to()`)."""
    return add_method_after_init(class_node, DEVICE_PROPERTY)


def register_buffer(name: str, value: cst.BaseExpression) -> cst.Call:
    """`self.register_buffer("<name>", <value>, persistent=False)`: a tensor that follows the
    Module's `.to()` without changing its `state_dict()` keys."""
    call = cst.parse_expression(f'self.register_buffer("{name}", VALUE, persistent=False)')
    return call.with_changes(args=[call.args[0], call.args[1].with_changes(value=value), call.args[2]])


def add_method_after_init(class_node: cst.ClassDef, code: str) -> cst.ClassDef:
    """The class with the method written in `code` (at no indentation) right after `__init__`
    (at the end without one), a blank line before it, and one after it where the next method had
    none (its blank line sat in `__init__`'s body: a line of spaces only)."""
    body = list(class_node.body.body)
    index = next((i + 1 for i, s in enumerate(body) if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), len(body))
    method = cst.parse_module(code).body[0].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    if index < len(body) and not body[index].leading_lines:
        body[index] = body[index].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    body.insert(index, method)
    return class_node.with_changes(body=class_node.body.with_changes(body=body))


def moved_to(value: cst.BaseExpression, device: str) -> cst.Call:
    """`value` → `value.to(<device>)`, the device given as code (`device`, `x.device`)."""
    return cst.Call(func=cst.Attribute(value=value, attr=cst.Name("to")), args=[cst.Arg(cst.parse_expression(device))])


def items_moved_to(container: cst.BaseExpression, device: str, kind: str) -> cst.BaseExpression:
    """A tuple or dict of tensors, which has no `.to()`, moved item by item:
    `tuple(value.to(device) for value in state)`, `{key: value.to(device) for key, value in batch.items()}`
    (names the device code reads are not taken for the loop's)."""
    taken = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", device))
    value = next(name for name in ("value", "tensor", "item_") if name not in taken)
    key = next(name for name in ("key", "field", "key_") if name not in taken)
    code = cst.Module([]).code_for_node(container)
    if kind == "dict":
        return cst.parse_expression(f"{{{key}: {value}.to({device}) for {key}, {value} in {code}.items()}}")
    return cst.parse_expression(f"tuple({value}.to({device}) for {value} in {code})")


def parenthesized(value: cst.BaseExpression) -> cst.BaseExpression:
    """`a + b` → `(a + b)` (also `-x`, `a == b`, `a if c else b`): a method call added after it
    then applies to the whole value."""
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation, cst.IfExp)) and not value.lpar:
        return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return value


def call_methods(value: cst.BaseExpression, *methods: str) -> cst.BaseExpression:
    """`value` → `value.m1().m2()` (`.detach().cpu()`), with no arguments."""
    for method in methods:
        value = cst.Call(func=cst.Attribute(value=value, attr=cst.Name(method)))
    return value


def is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def prepend_to_function(function: cst.FunctionDef, statements: list[cst.BaseStatement]) -> cst.FunctionDef:
    """Put `statements` first in the function body, after its docstring if it has one."""
    body = function.body.body
    return insert_in_body(function, 1 if body and is_docstring(body[0]) else 0, statements)


def insert_in_body(node: cst.FunctionDef | cst.For, index: int, statements: list[cst.BaseStatement]) -> cst.FunctionDef | cst.For:
    """Put `statements` at `index` of the indented body of a `def` or a `for` loop."""
    body = list(node.body.body)
    return node.with_changes(body=node.body.with_changes(body=[*body[:index], *statements, *body[index:]]))


def starts_a_cell(statement: cst.BaseStatement) -> bool:
    """The statement is the first of a notebook cell: the notebook's program has the cell's marker
    above it (`devfix.notebooks`). An edit must not merge it into the statement before, nor remove
    it with its marker."""
    return any(line.comment is not None and MARKER_LINE.match(line.comment.value) for line in statement.leading_lines)
