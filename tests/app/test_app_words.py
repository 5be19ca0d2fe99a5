"""The app speaks its own language and cannot be hijacked: messages name the page's inputs by
their labels (never CLI flags), server paths never show, a link's unusable parameters are named
in a warning, and text from a link or an upload reaches markdown escaped (issues 16 and 17)."""

from __future__ import annotations

import json
import re
import tempfile

import pytest

from ._apptest import (
    app,
    assert_clean,
    errors,
    everything,
    recommendation,
    texts,
    upload_team,
    warnings,
)
from .conftest import probe_report_json

FLAG = re.compile(r"(?<![\w-])--[a-z]")
EVIL = "![x](https://evil.example/x.png)[click](https://evil.example)"


def no_flags(text: str) -> None:
    assert not FLAG.search(text), f"a CLI flag on screen: {text!r}"


# ---- messages in the app's words ------------------------------------------------------------

@pytest.mark.parametrize("key, value, starts", [
    ("tokens", "2X", "“Training tokens” '2X' is not a count"),
    ("deadline", "soon", "“Deadline” 'soon' is not a duration or a date"),
    ("global_batch_tokens", "x", "“Global batch tokens” 'x' is not a count"),
])
def test_bad_input_is_one_line_naming_the_field_by_its_label(key, value, starts):
    at = app()
    at.text_input(key=key).set_value(value).run()
    assert not at.exception
    message = errors(at)[0]
    assert message.startswith(starts), message
    assert "\n" not in message and "Traceback" not in message and "To fix" in message
    no_flags(message)


def test_an_moe_error_names_the_moe_fields_of_the_page():
    """Regression: "--experts (2) must exceed --experts-per-token (4)" could not be fixed in
    the app, which had no such fields."""
    at = app(source="params", params="47B", active_params="13B")
    at.number_input(key="experts").set_value(2)
    at.number_input(key="experts_per_token").set_value(4).run()
    message = errors(at)[0]
    assert "“Experts” (2) must exceed “Experts per token” (4)" in message
    no_flags(message)
    at.number_input(key="experts").set_value(16)
    at.number_input(key="experts_per_token").set_value(2).run()
    assert_clean(at)
    recommendation(at)


def test_an_errors_field_is_named_by_the_widgets_label():
    """The planner's errors carry ``field``; the app names that input by its label."""
    import planner
    from app_pages._shared import FIELD_LABELS, error_out

    out = error_out(planner.WorkloadError("must be positive, got 0", field="seq_len"))
    assert out == {"error": f"“{FIELD_LABELS['seq_len']}”: must be positive, got 0",
                   "field": "seq_len"}
    # until an error has a field, its flags are translated
    out = error_out(planner.PlannerError("--max-gpus must be at least 1. To fix: pass e.g. "
                                         "--max-gpus 256"))
    assert out["field"] == "max_gpus"
    assert out["error"] == ("“Max GPUs” must be at least 1. To fix: set e.g. “Max GPUs” 256")


def test_assumptions_name_inputs_by_their_labels():
    at = app()  # the Assumptions tab is rendered with the others
    notes = [t for t in texts(at) if t.startswith("- ")]
    assert any("sequence length" in n for n in notes)
    for n in notes:
        no_flags(n)


def test_an_emptied_pricing_box_is_a_message_not_a_silent_default():
    at = app()
    at.multiselect(key="pricing").set_value([]).run()
    assert not at.exception
    assert any("Choose at least one of the Pricing models" in w.replace("*", "")
               for w in warnings(at))
    assert not [t for t in texts(at) if t.startswith("### Recommendation:")]


def test_the_accelerator_choices_are_what_the_planner_can_time():
    """Regression: FPGAs (and chips with no datasheet rates) were offered under "GPUs"."""
    options = app().multiselect(key="gpus").options
    assert "H100-SXM5-80GB" in options and "A10G" in options
    assert not [o for o in options if "FPGA" in o or o in ("K80", "Qualcomm-AI100")]
    assert options.index("H100-SXM5-80GB") < options.index("TPU-v5p")  # GPUs first


# ---- URL parameters -------------------------------------------------------------------------

def test_unusable_link_parameters_are_named_in_a_warning():
    at = app(clouds=["aws", "mars"], max_gpus="lots", model="gpt-9", colour="red")
    assert not at.exception
    warning = next(w for w in warnings(at) if "cannot use" in w)
    for shown in ("clouds=mars", "max_gpus=lots", "model=gpt-9", "colour=red"):
        assert shown in warning, warning
    assert at.multiselect(key="clouds").value == ["aws"]
    recommendation(at)  # the plan goes on with what the link could give
    at.text_input(key="deadline").set_value("10d").run()
    assert not [w for w in warnings(at) if "cannot use" in w], "said once, on opening"


def test_numbers_no_widget_can_hold_are_named_not_a_traceback():
    # Streamlit's reader raised OverflowError (int(inf)) on the page for these
    at = app(max_gpus="inf", seq_len="1" * 400, top="-inf", budget="1e300")
    assert not at.exception
    warning = next(w for w in warnings(at) if "cannot use" in w)
    for shown in ("max_gpus=inf", "top=-inf", "budget=1e300"):
        assert shown in warning, warning
    assert 1 <= at.number_input(key="max_gpus").value <= 65_536  # the default, not inf
    recommendation(at)


def test_catalog_link_parameters_are_checked_too():
    at = app("app_pages/catalog.py", offers_cloud="moon", offers_sort="cheapest")
    assert not at.exception
    warning = next(w for w in warnings(at) if "cannot use" in w)
    assert "offers_cloud=moon" in warning and "offers_sort=cheapest" in warning


# ---- nothing from outside reaches markdown unescaped ----------------------------------------

def test_a_link_cannot_inject_images_or_links():
    at = app(deadline=EVIL, tokens=EVIL)
    assert not at.exception
    source = "\n".join(e.value for e in [*at.error, *at.warning])
    assert "https" in source  # the text is shown, literally …
    assert "](" not in source and "![" not in source  # … never as markup


def test_an_uploaded_file_name_cannot_inject_markup_and_no_server_path_shows():
    at = app(source="config")
    at.file_uploader(key="config_file").set_value(
        (f"{EVIL}.json", b"{not json", "application/json")).run()
    assert not at.exception
    source = at.error[0].value
    assert "not valid JSON" in source and "](" not in source and "![" not in source
    shown = everything(at)
    assert tempfile.gettempdir() not in shown and "gpuplan-config-" not in shown


def test_an_uploaded_config_is_named_by_its_upload_not_its_temporary_path():
    config = {"model_type": "llama", "num_hidden_layers": 16, "hidden_size": 2048,
              "num_attention_heads": 16, "num_key_value_heads": 8, "intermediate_size": 5632,
              "vocab_size": 32000, "max_position_embeddings": 2048}
    at = app(source="config")
    at.file_uploader(key="config_file").set_value(
        ("my-model.json", json.dumps(config).encode(), "application/json")).run()
    assert_clean(at)
    shown = everything(at)
    assert "my-model.json" in shown.replace("\\", "")
    assert tempfile.gettempdir() not in shown and "gpuplan-config-" not in shown


def test_uploads_larger_than_the_limit_are_refused():
    at = app(source="config")
    big = b"{" + b" " * (1 * 2**20 + 10) + b"}"
    at.file_uploader(key="config_file").set_value(("config.json", big,
                                                   "application/json")).run()
    assert not at.exception
    # in bytes: "is 1.0 MB; a config is at most 1 MB" gave no reason for a file 12 bytes over
    assert any("config.json is 1,048,588 bytes; a config is at most 1,048,576 bytes (1 MB)"
               in e for e in errors(at)), errors(at)


def test_token_counts_beyond_a_thousand_trillion_read_as_numbers():
    from app_pages._format import count

    assert [count(x) for x in (5e10, 1.5e12, 1e15, 999.6e9)] == [
        "50B", "1.5T", "1,000T", "1T"]  # not 1e+03T, not 1,000B


# ---- the team page: an upload may not name server files -------------------------------------

TEAM_WITH_CONFIG = """\
jobs:
  - name: reads-the-server
    workload: {config: /dev/zero, tokens: 1B}
    earliest_start: 2027-03-01
    deadline: 2027-04-01
"""


def test_an_uploaded_team_plan_cannot_name_a_server_file():
    """The file a job names is asked for as an upload, never read on the server."""
    from app_pages._inputs import for_upload

    at = app("app_pages/team.py")
    at.radio(key="team_source").set_value("yaml").run()
    at.file_uploader(key="team_yaml").set_value(("team.yaml", TEAM_WITH_CONFIG.encode(),
                                                 "text/yaml")).run()
    assert not at.exception and not at.button
    assert "upload /dev/zero" in at.info[0].value.replace("\\", "")
    # what is uploaded under that name is what is read (/dev/zero would never end)
    at.file_uploader(key=for_upload("team_config", b"/dev/zero")).set_value(
        ("config.json", b"[]", "application/json")).run()
    at.button(key="team_run").click().run()
    assert not at.exception
    message = errors(at)[0]
    assert "/dev/zero" in message and "To fix" in message
    assert not at.get("plotly_chart")


def test_an_uploaded_team_plan_cannot_make_the_server_read_a_file():
    """A team plan from the browser is data: `workload: config:` names no file the server
    reads (the parser reads none; only `gpuplan report` on a file reads its configs)."""
    import catalog
    from app_pages._shared import parse_team_plan_no_paths

    data = {"jobs": [{"name": "j", "workload": {"config": "/dev/zero", "tokens": "1B"},
                      "earliest_start": "2027-04-01", "deadline": "2027-05-01"}]}
    with pytest.raises(catalog.GpuplanError, match="cannot name files on this machine"):
        parse_team_plan_no_paths(data, catalog=catalog.load_catalog("packaged"),
                                 source="t.yaml")


def test_an_uploaded_team_plan_name_is_escaped():
    at = upload_team("jobs: [", name=f"{EVIL}.yaml")
    assert not at.exception
    source = at.error[0].value
    assert "](" not in source and "![" not in source


def test_a_cpu_probe_run_is_stored_for_reference_and_said_to_calibrate_nothing():
    """Regression: the page said a CPU run never calibrates a GPU, then "Plans now use its
    measurements"."""
    at = app("app_pages/probes.py")
    at.file_uploader(key="probe_file").set_value(
        ("cpu.json", probe_report_json(bf16_tflops=0.42, device_type="cpu"),
         "application/json")).run()
    assert_clean(at)
    assert any("never calibrates a GPU" in c.value for c in at.caption)
    at.button(key="probe_ingest").click().run()
    assert_clean(at)
    done = at.success[0].value.replace("\\", "")
    assert "for reference only" in done and "now use" not in done


def test_a_command_a_message_suggests_keeps_its_flags():
    # "re-run `python -m probes --out PATH`" became "`python -m probes “out” PATH`"
    from app_pages._shared import app_words

    assert app_words("re-run `python -m probes --out PATH` on the node") == \
        "re-run `python -m probes --out PATH` on the node"
    assert app_words("(format: `gpuplan plan --help`, --quota-file); pass --seq-len 4096") == \
        "(format: `gpuplan plan --help`, “quota file”); set “Sequence length” 4096"


def test_fields_between_two_backticked_names_are_translated_too():
    """The text between `max_gpus` and `recompute` was read as a command (backtick, a word,
    a space …, backtick) and both names stayed untranslated on the page."""
    at = app(source="params", params="1e14")
    said = " ".join(errors(at))
    assert "“Max GPUs”" in said and "`max_gpus`" not in said and "`recompute`" not in said, said


def test_the_model_boxes_say_what_is_wrong_in_the_page_s_words():
    """An emptied "Total parameters" and a config.json of `null` were "give exactly one of
    “Model preset” NAME, … or “Total parameters” N"; the dense-model advice ("Experts" 0) could
    not be typed (the box started at 1)."""
    assert errors(app(source="params", params="")) == [
        "“Total parameters” is empty. To fix: set e.g. “Total parameters” 7B"]
    at = app(source="config")
    at.file_uploader(key="config_file").set_value(("config.json", b"null",
                                                   "application/json")).run()
    assert "expected a JSON object of model settings, found null" in errors(at)[0]
    at = app(source="params", params="47B", experts="8")
    assert "or set “Experts” 0 for a dense model" in errors(at)[0]
    at.number_input(key="experts").set_value(0).run()
    assert_clean(at)


def test_rounded_figures_do_not_contradict_the_sentence_they_are_in():
    """"would cost less … finishes in time with probability 100%" (99.97%), and a later plan of
    1.04 h shown as "1.0 h" beside a 1.0 h deadline."""
    from app_pages._format import chance, duration_beside

    assert [chance(p) for p in (0.5, 0.9997, 1.0, 0.99999999, 0.004, 1e-5)] == [
        "50%", "99.97%", "> 99.99%", "> 99.99%", "0.4%", "< 0.01%"]
    assert duration_beside(1.04, 1.0) == "1.04 h" and duration_beside(30.0, 1.0) == "30.0 h"
    assert duration_beside(96.4, 96.0) == "4.02 days"  # "4.0 days" beside a 96 h deadline
    said = " ".join(texts(app(min_prob="1")))
    assert "with probability 100%" not in said


def test_the_assumptions_tab_says_each_assumption_once():
    at = app(source="params", params="7B")
    shown = [m.value for m in at.markdown if m.value.startswith("- ")]
    assert any("inferred from parameter count" in s for s in shown)
    assert len(shown) == len(set(shown)), [s for s in shown if shown.count(s) > 1]


def test_a_budget_of_zero_is_refused_as_the_cli_refuses_it():
    """0 in the Budget box silently meant "no budget" (`budget or None`); the box now starts
    above 0, so a link's 0 is refused as every value outside the box's range is."""
    at = app(budget="0")
    said = " ".join(w.value for w in at.warning).replace("\\", "")  # markdown escapes
    assert "budget=0" in said and "not a valid value: 0.0001 to" in said, said


def test_a_cheap_short_run_shows_cents_and_minutes_not_a_fixed_zero():
    # gpt2 on 500M tokens (about $0.31 on spot) read "$0", "0.0 h", and "the same whatever
    # the run's length (whole terms)" — a commitment's caption, on a spot plan
    at = app(model="gpt2", tokens="500M")
    assert_clean(at)
    cost = next(m for m in at.metric if m.label == "Total cost").value
    wall = next(m for m in at.metric if m.label == "Wall-clock").value
    assert re.fullmatch(r"\$\d+\.\d\d", cost) and cost != "$0.00"
    assert wall.endswith("min")
    assert "whole terms" not in everything(at)


def test_empty_training_tokens_means_twenty_per_parameter_as_the_cli():
    # it said "“Training tokens” is empty. To fix: … leave “Training tokens” out"
    at = app(model="gpt2", tokens="")
    assert_clean(at)
    assert "20 per active parameter" in everything(at)


def test_probabilities_in_tables_are_never_rounded_to_certainty():
    from app_pages._format import CELL

    assert [CELL["chance"](p) for p in (0.99996, 1.0, 0.5, 3.5e-5)] == [
        "> 99.99%", "> 99.99%", "50%", "< 0.01%"]
    from app_pages import _plan_cards, team

    assert _plan_cards.CANDIDATE_COLUMNS["deadline_probability"][1] == "chance"
    assert team.JOB_COLUMNS["deadline_probability"][1] == "chance"


def test_a_utf16_config_is_told_to_be_saved_as_utf8():
    # it was told to "upload the model's Hugging Face config.json", which it is
    at = app(source="config")
    data = json.dumps({"model_type": "llama", "num_hidden_layers": 2}).encode("utf-16")
    at.file_uploader(key="config_file").set_value(("c.json", data, "application/json")).run()
    assert not at.exception
    assert "To fix: save the file as UTF-8, or upload the model's Hugging Face config.json" \
        in errors(at)[0]


def test_app_messages_never_say_the_clis_pass():
    at = app(deadline="")
    assert not at.exception
    said = " ".join(errors(at))
    assert "To fix: give e.g. 14d" in said and "pass" not in said


def test_a_min_gpus_link_above_any_instance_is_named_as_a_link_problem():
    at = app("app_pages/catalog.py", offers_min_gpus="99999")
    assert not at.exception and not at.error  # the box refuses it; the page does not fail
    assert any("offers_min_gpus=99999" in w for w in warnings(at))


def test_team_table_errors_speak_of_rows_and_cells_not_yaml_fields():
    from app_pages._team_words import table_words

    assert table_words("table: jobs[3] 'newjob': missing 'earliest_start'. To fix: correct the "
                       "team plan (format: docs/team.md)") == (
        "Jobs table, row 3 (newjob): the earliest_start cell is empty. To fix: fill it in")
    assert table_words("table: jobs[1] 'a': workload: model is empty. To fix: give a value or "
                       "remove the field").endswith("To fix: fill in the cell")
    assert table_words("table: jobs[1] 'a': max_gpus must be … got 0. To fix: e.g. "
                       "max_gpus: 256").endswith("To fix: e.g. 256")


@pytest.mark.parametrize("name", ["jobs[7]", "x': y", 'say "hi"', "back\\slash"])
def test_a_job_name_is_shown_as_typed_in_a_table_error(name):
    """A job named "jobs[7]" read "row 7" ("Jobs table, row 1 (row 7): …"), and one with a
    quote lost the "Jobs table" prefix: the name is the planner's repr, not a bare quote."""
    from app_pages._team_words import table_words

    said = table_words(f"table: jobs[1] {name!r}: name already used by jobs[2]. To fix: give "
                       "every job a unique name")
    assert said == (f"Jobs table, row 1 ({name}): name already used by row 2. To fix: give "
                    "every job a unique name")


def test_a_config_name_in_a_team_plan_is_shown_literally():
    """The uploader's label is the plan's text: markdown in it was rendered (a link)."""
    text = TEAM_WITH_CONFIG.replace("/dev/zero", "'[x](http://evil.example/a.json)'")
    at = app("app_pages/team.py")
    at.radio(key="team_source").set_value("yaml").run()
    at.file_uploader(key="team_yaml").set_value(("team.yaml", text.encode(), "text/yaml")).run()
    assert not at.exception
    (uploader,) = [u for u in at.get("file_uploader") if u.key != "team_yaml"]
    assert uploader.label.startswith("\\[x\\]\\(http") and "named by the plan" in uploader.label


def test_a_cli_metavar_after_an_input_is_left_out():
    """"set “Catalog accelerator” NAME": NAME is the CLI's metavar; the box is right above
    (app sweep 2026-12-04)."""
    from app_pages._shared import app_words

    said = app_words("cannot tell which catalog accelerator 'X' is. To fix: pass "
                     "`accelerator` NAME (see `gpuplan gpus`)")
    assert "NAME" not in said and "“Catalog accelerator” (see" in said


def test_settings_the_app_has_no_box_for_are_named_by_how_they_are_set():
    """"set “restart minutes”" and "added with “overrides”" named boxes the page does not
    have (a model constant is the CLI's; prices come from the GPUPLAN_OVERRIDES file)."""
    from app_pages import _shared as S

    assert S.app_words("faster (set `restart_minutes` if your restarts are faster)") == \
        "faster (set the CLI's model constant restart_minutes if your restarts are faster)"
    assert S.app_words("rates can be added with --overrides") == \
        "rates can be added with the GPUPLAN_OVERRIDES file (docs/app.md)"
    assert S.app_words("set `max_gpus`") == "set “Max GPUs”"  # a box the page has
