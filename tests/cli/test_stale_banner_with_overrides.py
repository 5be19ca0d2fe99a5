"""The stale-price line told the user to "apply your own rates with --overrides" when an
overrides file was already applied: it now says the age holds where the overrides set no rate,
and suggests only a refresh."""

from __future__ import annotations

from cli_terminal import run

PLAN = ("plan", "--model", "llama2-7b", "--tokens", "1T", "--deadline", "14d", "--json")


def test_applied_overrides_are_not_suggested_again(capsys, tmp_path):
    rates = tmp_path / "overrides.yaml"
    rates.write_text("discounts:\n  - {cloud: aws, percent: 8}\n", encoding="utf-8")
    code, _, err = run(capsys, *PLAN, "--overrides", str(rates))
    line = " ".join(err.split())
    assert code == 0 and f"overrides from {rates}" in line
    assert "days old where the overrides set no rate" in line
    assert "gpuplan catalog refresh" in line and "--overrides" not in line


def test_without_overrides_they_are_still_suggested(capsys):
    code, _, err = run(capsys, *PLAN)
    line = " ".join(err.split())
    assert code == 0 and "Prices are up to" in line
    assert "or apply your own rates with --overrides" in line


def test_catalog_info_does_not_suggest_overrides_it_applies(capsys, tmp_path):
    rates = tmp_path / "overrides.yaml"
    rates.write_text("discounts:\n  - {cloud: aws, percent: 8}\n", encoding="utf-8")
    code, out, err = run(capsys, "catalog", "info", "--overrides", str(rates))
    said = " ".join((out + err).split())
    assert code == 0 and "where the overrides set no rate" in said
    assert "or use --overrides" not in said
    code, out, err = run(capsys, "catalog", "info")
    assert "or use --overrides" in " ".join((out + err).split())
