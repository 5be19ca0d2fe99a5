"""Each uploader says its size limit as text beside it: a file over it is refused by the
browser, which says why only in a hover tooltip."""

from __future__ import annotations

import pytest

from ._apptest import app


@pytest.mark.parametrize(("page", "setup", "said"), [
    ("app_pages/probes.py", None, "A probe report is at most 4 MB."),
    ("app_pages/team.py", "yaml", "A team plan is at most 1 MB."),
])
def test_the_upload_limit_is_said_beside_the_uploader(page, setup, said):
    at = app(page)
    if setup:
        at.radio(key="team_source").set_value(setup).run()
    assert not at.exception
    assert said in [c.value for c in at.caption], [c.value for c in at.caption]
