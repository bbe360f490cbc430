"""Where does the code mean to fail? The bodies of `with pytest.raises(...)` and `with
self.assertRaises(...)` (also `assertRaisesRegex`, numpy's `assert_raises`): a test there checks
that an error is raised, a device error too (`x = torch.randn(2, 3)` fed to a model on a GPU,
inside `self.assertRaises(RuntimeError)`). Aligning devices there would defeat the test, so no
rule reports or fixes anything in those lines."""

from __future__ import annotations

import ast

from devfix.analysis.imports import ImportTable

RAISES_FUNCTIONS = frozenset({"pytest.raises", "numpy.testing.assert_raises", "numpy.testing.assert_raises_regex"})
RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})  # unittest.TestCase's


def expected_error_blocks(tree: ast.Module, imports: ImportTable) -> tuple[tuple[int, int], ...]:
    """(first line, last line) of each `with` statement, body included, that expects an error."""
    blocks = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(_expects_an_error(item.context_expr, imports) for item in node.items):
            blocks.append((node.lineno, node.end_lineno or node.lineno))
    return tuple(sorted(blocks))


def _expects_an_error(expression: ast.expr, imports: ImportTable) -> bool:
    if not isinstance(expression, ast.Call):
        return False
    func = expression.func
    if isinstance(func, ast.Attribute) and func.attr in RAISES_METHODS:
        return True
    return imports.qualify(func) in RAISES_FUNCTIONS
