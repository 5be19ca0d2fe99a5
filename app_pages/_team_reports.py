"""The Team page's downloaded reports: which formats it offers, and each drawn from the
allocation the page shows with the plan's dates against today (``check_dates``) among its
warnings, as `gpuplan report` writes them: a reader of the file saw no word that a job's
earliest start or deadline had passed."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import catalog
from planner import reports as team_reports
from planner import team as teams_

REPORT_FORMATS = {"HTML": "html", "PDF": "pdf", "Markdown": "md", "CSV": "csv"}
# Drawn when its button is clicked, not with the allocation: matplotlib took 28 s of a
# 500-job team's 32 s allocation, on every run whether or not anyone downloaded the PDF (the
# others take well under a second)
ON_CLICK = frozenset({"pdf"})
MIME = {"html": "text/html", "pdf": "application/pdf", "md": "text/markdown",
        "csv": "text/csv"}


def render_reports(allocation: teams_.Allocation) -> dict[str, tuple[str, bytes | None]]:
    """label: (format, bytes, or None for one drawn when asked for: ``report_on_click``)."""
    reports = {}
    for label, fmt in REPORT_FORMATS.items():
        try:
            if fmt in ON_CLICK:
                team_reports.check_format(fmt)  # offered only if it can be drawn
                reports[label] = (fmt, None)
            else:
                reports[label] = (fmt, team_reports.render(allocation, fmt))
        except (catalog.GpuplanError, ImportError):
            continue  # e.g. PDF without matplotlib (the report extra): offer the others
    return reports


def report_on_click(a: dict, fmt: str,
                    date_warnings: Sequence[str] = ()) -> Callable[[], bytes]:
    """The report of the allocation ``a`` (``Allocation.as_dict()``) in ``fmt``, drawn when
    its download button is clicked: Streamlit calls it then (``data`` of
    ``st.download_button`` may be a callable). The allocation is rebuilt from its dict, the
    one the page shows, not allocated again; its ``date_warnings`` (not in the dict) are
    given beside it."""
    def render() -> bytes:
        return team_reports.render(
            teams_.Allocation(**a, date_warnings=tuple(date_warnings)), fmt)

    return render
