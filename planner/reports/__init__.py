"""Team budget reports: HTML, PDF, Markdown and CSV from one allocation, and actuals.

    render(allocation, fmt, actuals=None) -> bytes     the report (FORMATS)
    check_format(fmt)                                  refuse now what render would refuse
    compare_actuals(allocation, actuals)               planned against spent
    is_report(head, tail)                              a file render wrote
    load_actuals, parse_actuals, ACTUALS_COLUMNS       what was spent, from a CSV
    neutralise_cell, neutralise_row                    CSV cells no spreadsheet runs

Every report freezes its prices and reads no clock: the same allocation renders the same
bytes. The HTML report's charts are inline SVG written in plain Python; only the PDF needs
matplotlib (``pip install -e '.[report]'``), imported when a PDF is rendered.
"""

from ._actuals import ACTUALS_COLUMNS, load_actuals, parse_actuals
from ._csvsafe import FORMULA_TRIGGERS, neutralise_cell, neutralise_row
from ._render import (
    FORMATS,
    REPORT_TAIL_BYTES,
    check_format,
    compare_actuals,
    is_report,
    render,
)

__all__ = ["ACTUALS_COLUMNS", "FORMATS", "FORMULA_TRIGGERS", "REPORT_TAIL_BYTES", "check_format",
           "compare_actuals", "is_report", "load_actuals", "neutralise_cell", "neutralise_row",
           "parse_actuals", "render"]
