"""JUnit XML, which CI systems (Jenkins, GitLab, Azure) show as test results: one test suite a
file with findings, one failed test case a finding; a run with none is one passing case."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING
from xml.etree import ElementTree

if TYPE_CHECKING:
    from devfix.output import Report


def render(report: Report) -> str:
    suites = ElementTree.Element("testsuites", name="devfix")
    by_file = defaultdict(list)
    for result, finding in report.findings():
        by_file[result.path].append(("failure", f"{finding.code} at {finding.place}", finding.message))
    for error in report.errors():
        by_file[error.path or "devfix"].append(("error", "cannot process", error.message))
    if not by_file:
        suite = ElementTree.SubElement(suites, "testsuite", name="devfix", tests="1", failures="0", errors="0")
        ElementTree.SubElement(suite, "testcase", name="No findings", classname="devfix")
    for path, cases in by_file.items():
        failures = sum(kind == "failure" for kind, *_ in cases)
        suite = ElementTree.SubElement(suites, "testsuite", name=path, tests=str(len(cases)), failures=str(failures), errors=str(len(cases) - failures))
        for kind, name, message in cases:
            case = ElementTree.SubElement(suite, "testcase", name=name, classname=path)
            ElementTree.SubElement(case, kind, message=message).text = f"{path}: {message}"
    suites.set("tests", str(sum(len(cases) for cases in by_file.values()) or 1))
    suites.set("failures", str(sum(kind == "failure" for cases in by_file.values() for kind, *_ in cases)))
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"
