"""Helpers for driving the app with streamlit.testing.v1.AppTest: open a page (with URL
parameters), read what it shows as a person reads it (markdown unescaped, table cells as
displayed, chart specs), and assert that nothing went wrong."""

from __future__ import annotations

import json
import re

from streamlit.testing.v1 import AppTest

from .conftest import APP

PAGES = ["app_pages/plan.py", "app_pages/catalog.py", "app_pages/probes.py",
         "app_pages/team.py"]
TIMEOUT_S = 60  # the first run imports numpy/scipy/plotly; later runs take well under 1 s


def app(page: str | None = None, **query: str | list[str]) -> AppTest:
    """The app opened at ``page`` (default: Plan) with ``query`` as the link's parameters."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    at.query_params.update(query)
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


def upload_team(text: str, name: str = "team.yaml") -> AppTest:
    """The Team page with ``text`` uploaded as a team YAML named ``name``, allocation run."""
    at = app("app_pages/team.py")
    at.radio(key="team_source").set_value("yaml").run()
    at.file_uploader(key="team_yaml").set_value((name, text.encode(), "text/yaml")).run()
    at.button(key="team_run").click().run()
    return at


def plain(text: str) -> str:
    """Markdown source as it reads on screen: backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", text)


def texts(at: AppTest) -> list[str]:
    return [plain(m.value) for m in at.markdown]


def everything(at: AppTest) -> str:
    """Every piece of text the page shows (markdown, captions, alerts, metrics, code)."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.value for kind in ("error", "warning", "info", "success") for e in at.get(kind)]
    parts += [f"{m.label} {m.value}" for m in at.metric] + [c.value for c in at.code]
    return "\n".join(parts)


def recommendation(at: AppTest) -> str:
    lines = [t for t in texts(at) if t.startswith("### Recommendation:")]
    assert len(lines) == 1, (texts(at), [e.value for e in at.error])
    return lines[0]


def errors(at: AppTest) -> list[str]:
    return [plain(e.value) for e in at.error]


def warnings(at: AppTest) -> list[str]:
    return [plain(w.value) for w in at.warning]


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def table_columns(element) -> dict[str, dict]:
    """An st.dataframe's column settings: name → {"label": heading, "format": number format}
    (the browser formats the numbers; "dollar" shows "$1,234"), with what a missing cell shows
    under the key None."""
    config = json.loads(element.proto.columns or "{}")
    out = {c: {"label": v.get("label", c),
               "format": v.get("type_config", {}).get("format")} for c, v in config.items()
           if not c.startswith("_")}  # "_index": the hidden row index
    out[None] = {"label": element.proto.placeholder, "format": None}
    return out


def chart(at: AppTest, key: str) -> dict:
    """The plotly figure (as JSON) of the chart with ``key``."""
    for c in at.get("plotly_chart"):
        if c.proto.id.endswith(key) or key in c.proto.id:
            return json.loads(c.proto.spec)
    raise AssertionError(f"no chart {key!r} among {[c.proto.id for c in at.get('plotly_chart')]}")
