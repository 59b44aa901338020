"""A verify/check report as JUnit XML (the format CI systems read): one testsuite per target,
one testcase per variant x build; FAIL is a failure, TIMEOUT an error (a limit, not the code),
SKIPPED and COVERED (not run: the newest version's row checks the same code) skipped with the reason."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path


def junit_xml(report) -> ET.Element:
    suites = ET.Element("testsuites", name="threefish-gen verify")
    by_target: dict = {}
    for r in report.rows:
        by_target.setdefault(r.variant.split()[0], []).append(r)
    for target, rows in by_target.items():
        s = ET.SubElement(suites, "testsuite", name=target, tests=str(len(rows)),
                          failures=str(sum(r.status == "FAIL" for r in rows)),
                          errors=str(sum(r.status == "TIMEOUT" for r in rows)),
                          skipped=str(sum(r.status.startswith(("SKIPPED", "COVERED")) for r in rows)),
                          time=f"{sum(r.seconds for r in rows):.3f}")
        ET.SubElement(ET.SubElement(s, "properties"), "property", name="seed", value=str(report.seed))
        for r in rows:
            c = ET.SubElement(s, "testcase", classname=f"{target}.{r.build}", name=r.variant,
                              time=f"{r.seconds:.3f}")
            if r.status == "FAIL":
                ET.SubElement(c, "failure", message=r.detail[:500]).text = r.detail
            elif r.status == "TIMEOUT":
                ET.SubElement(c, "error", type="TIMEOUT", message=r.detail[:500]).text = r.detail
            elif r.status.startswith(("SKIPPED", "COVERED")):       # COVERED: not run (verify/shapes.py)
                ET.SubElement(c, "skipped", message=r.detail[:500])
            else:
                ET.SubElement(c, "system-out").text = f"{r.status}: {r.detail}"
    return suites


def write_junit(report, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tree = ET.ElementTree(junit_xml(report))
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
