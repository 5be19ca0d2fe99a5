"""Inputs from outside the app: widgets bound to the URL that name the link's parameters they
could not use (instead of silently showing defaults), and file uploads with a size limit.
Everything they report is shown escaped (``_format.md``)."""

from __future__ import annotations

import streamlit as st

from app_pages._format import md
from app_pages._link_names import as_choices, did_you_mean

Q = "query-params"


# ---- URL parameters ----------------------------------------------------------------------------

class UrlInputs:
    """Widgets bound to the URL (``bind="query-params"``, key = parameter name) that report a
    parameter of the opened link they could not use, instead of silently showing the default.

    Streamlit drops such a parameter while it registers the widget, so the link's parameters
    are read before any widget exists, on the page's first run in the session (later runs see
    the URL as the widgets keep it).
    """

    IGNORED = frozenset({"embed", "embed_options"})
    # The URL settings of the pages that have them (a test keeps them equal to the pages'
    # widgets). A link's parameter that no page has is taken out of the URL on the page's first
    # run, so a reload or a copy does not warn again; one of another page is left for it
    # (``?offers_cloud=aws`` opened on the Plan page filters the Catalog when it is shown).
    SETTINGS = {
        "plan": frozenset({
            "source", "model", "params", "active_params", "experts", "experts_per_token",
            "tokens", "seq_len", "global_batch_tokens", "precision", "recompute", "deadline",
            "budget", "max_gpus", "min_prob", "max_spot", "clouds", "regions", "pricing",
            "gpus", "commitment_use", "allow_flagged", "compare", "top"}),
        "catalog": frozenset(f"offers_{k}" for k in ("gpu", "cloud", "region", "pricing",
                                                      "min_gpus", "max_price", "sort", "unpriced"))}

    def __init__(self, page: str):
        self.page = page
        flag = f"_url_checked_{page}"
        self.first_run = not st.session_state.get(flag, False)
        st.session_state[flag] = True
        # every page makes one on every run: the page that ran last is known to the next
        self.arrived = st.session_state.get("_url_page", page) != page
        st.session_state["_url_page"] = page
        qp = st.query_params
        self.given = frozenset(qp)  # the parameters the URL carries as this run starts
        self.raw = {k: qp.get_all(k) for k in qp} if self.first_run else {}
        self.problems: list[str] = []
        self.keys: set[str] = set()
        self.values: dict[str, object] = {}  # key → the value each widget returned this run
        # the link's parameters of no page, taken out of the URL by the page that first ran:
        # each page shown afterwards names them too (as it did while the URL kept them)
        strays = st.session_state.setdefault("_url_strays", {})
        self.strays = dict(strays) if self.first_run else {}
        if self.first_run:
            known = frozenset().union(*self.SETTINGS.values()) | self.IGNORED
            stray = {k: v for k, v in self.raw.items() if k not in known}
            if stray:
                _drop_params(stray)
                strays.update(stray)

    def __call__(self, widget, label: str, *args, key: str, resolve=None, **kwargs):
        """The widget, bound to the URL parameter ``key``; ``resolve`` (a choice widget's)
        gives the choice another name of it means (``Catalog.resolve_accelerator``: a link's
        ``gpus=H100``), raising ``GpuplanError`` for none."""
        opened = self.raw.get(key)  # the link's values, on the page's first run
        many = _takes_many(widget, kwargs)
        # a list item by item (regions=us-east-1,us-west-2, as the CLI's --region takes it);
        # no choice of a required widget is empty (?compare= showed none chosen)
        raw = opened and _link_items(opened, many=many, required=bool(kwargs.get("required")))
        unbound = False  # for this run only: the next binds it again (see the end)
        # a choice named as the CLI takes it (AWS, llama-3-8b, H100) is the choice: Streamlit
        # takes only the exact spelling, and refused such a link for the default
        choices = _choices(widget, args, kwargs)
        taken = as_choices(raw, list(choices), many=many, resolve=resolve) if raw else raw
        if opened and (taken != opened or (len(opened) > 1 and not many)):
            # a widget of one value takes a link's last (Streamlit's rule): the others are
            # dropped from the URL, which kept both, so a reload or a copy warned again
            keep = [t for t in taken if t in choices] if choices and many else taken
            if keep:  # a list only as its choices (not a100 of h100,a100)
                _set_param(key, keep if many else keep[-1])
            else:  # nothing usable (?compare=): the widget shows its default
                _drop_param(key)
                unbound = True
        chosen = [choices[t] for t in (taken or [])[0 if many else -1:] if t in choices]
        resync = st.session_state.setdefault("_url_resync", {})
        mapped = taken != opened and bool(chosen)
        if mapped:
            # a bound widget reads the link as the page was opened (it took gcp of AWS,gcp),
            # not as set above: this run it is unbound and told the choices
            st.session_state[key] = resync[key] = chosen if many else chosen[0]
        elif key in resync and not self.first_run:
            # bound again: its value set again (as the widget shows it), so Streamlit keeps
            # it over the link as opened and writes it into the URL (a value typed after a
            # bad link's run was never put in the URL, and a copied link lost it)
            resync.pop(key)
            if key in st.session_state:
                st.session_state[key] = st.session_state[key]
        if getattr(widget, "__name__", "") == "number_input":
            whole = _whole_number_box(args, kwargs)
            if not all(_plain_number(r, whole=whole) for r in opened or ()):
                # Streamlit's reader of the link's value does int(inf) for an integer widget
                # given inf or a 400-digit number (an OverflowError on the page), and int(1.5)
                # (a Max GPUs of 1 planned while the warning called 1.5 invalid): on the run
                # that reads the link the widget is not bound, so it shows its default, and
                # the value is named below as unusable and taken out of the URL (a reload or
                # a shared copy of the link warned again)
                unbound = True
                _drop_param(key)
        value = widget(label, *args, key=key, **({} if unbound or mapped else {"bind": Q}),
                       **kwargs)
        if unbound and not mapped:
            resync[key] = value  # bound again on the next run
        self.keys.add(key)
        self.values[key] = value
        shown = _shown(value, empty=kwargs.get("placeholder"),
                       blank=_empty_by_default(widget, args, kwargs))
        if opened and len(opened) > 1 and not many:
            # a link holds one value per widget (a multiselect's list aside): which of two
            # Streamlit takes varies by widget, so the link is named as it is, not judged
            self.problems.append(f"{key}={_values(opened)} ({label}: given {len(opened)} "
                                 f"times, a link sets it once; showing {shown})")
        elif opened is not None:
            # of a link with nothing usable (compare=, clouds=,) the first value is named
            bad = _unusable(taken, value) if taken else [r for r in opened if r == "" or many][:1]
            if bad:
                why = "not one of the choices" if isinstance(value, list) else \
                    "not a valid value" + _range(widget, args, kwargs)
                self.problems.append(f"{key}={_values(bad)} ({label}: {why}; showing {shown}"
                                     f"{did_you_mean(bad, list(choices), resolve)})")
        return value

    # Browser Back to a Plan entry without parameters (Streamlit pushes a bare "/" when the
    # page is left) is a history navigation, on which Streamlit resets every bound widget
    # that the URL does not name to its default, over any value set in session state: the
    # page came back planning gpt2-xl 50B 7d instead of the plan left. What the widgets
    # returned is kept under a plain key, and given back on the run after (``keep``).

    def restore(self) -> None:
        """Before the page's first widget: the values ``keep`` asked to give back, set."""
        for key, value in st.session_state.pop(f"_url_restore_{self.page}", {}).items():
            st.session_state[key] = value

    def keep(self) -> None:
        """After the page's last widget: its values kept for a later visit; when the page was
        entered from another page by a URL without any of its inputs, and the widgets do not
        show what was kept (a history navigation reset them), the page runs again with the
        kept values (``restore``), which Streamlit then writes back into the URL."""
        kept = st.session_state.get(f"_url_kept_{self.page}")
        if self.arrived and kept and not self.given & kept.keys() and kept != self.values:
            st.session_state[f"_url_restore_{self.page}"] = kept
            st.rerun()
        st.session_state[f"_url_kept_{self.page}"] = dict(self.values)

    def warn(self) -> None:
        """One warning naming every unusable or unknown parameter of the link: each value cut
        to ``SHOWN_CHARS`` and at most ``SHOWN_UNKNOWN`` unknown names, so a crafted link
        cannot fill the page."""
        link = self.strays | self.raw
        unknown = [k for k in link if k not in self.keys and k not in self.IGNORED]
        lines = list(self.problems)
        lines += [f"{_cut(k)}={_values(link[k])} (not a setting of this page: unused here)"
                  for k in unknown[:SHOWN_UNKNOWN]]
        if len(unknown) > SHOWN_UNKNOWN:
            lines.append(f"and {len(unknown) - SHOWN_UNKNOWN:,} more not of this page")
        if lines:
            st.warning("The link has parameters this page cannot use: "
                       + "; ".join(md(x) for x in lines), icon=":material/link_off:")


SHOWN_CHARS = 40  # of each value a warning repeats
SHOWN_UNKNOWN = 10  # unknown parameters a warning names


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"


def _values(values: list[str]) -> str:
    """A parameter's values as a warning shows them: each cut, at most ``SHOWN_UNKNOWN``, an
    empty one as "" (``tokens=1T&tokens=`` read "tokens=1T, ")."""
    shown = ", ".join(_cut(v) if v else '""' for v in values[:SHOWN_UNKNOWN])
    return shown + (f" and {len(values) - SHOWN_UNKNOWN:,} more"
                    if len(values) > SHOWN_UNKNOWN else "")


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,}"


def _range(widget, args: tuple, kwargs: dict) -> str:
    """': 0 to 0.99' for a number box or slider with bounds (the first four arguments of both
    are min, max, value, step), so the warning says what the link may give."""
    if getattr(widget, "__name__", "") not in ("number_input", "slider"):
        return ""
    given = dict(zip(_NUMBER_INPUT_ARGS, args, strict=False)) | kwargs
    low, high = given.get("min_value"), given.get("max_value")
    if not all(isinstance(b, int | float) or b is None for b in (low, high)):
        return ""  # a date or time slider: no such words
    whole = "a whole number " if _whole_number_box(args, kwargs) else ""  # 1.5 for Max GPUs
    if low is not None and high is not None:
        return f": {whole}{'from ' if whole else ''}{_number(low)} to {_number(high)}"
    if low is not None:
        return f": {whole}at least {_number(low)}"
    return f": {whole}at most {_number(high)}" if high is not None else ""


_NUMBER_INPUT_ARGS = ("min_value", "max_value", "value", "step")  # st.number_input's order


def _takes_many(widget, kwargs: dict) -> bool:
    """Whether a widget's value is a list (a link may give it several values)."""
    return getattr(widget, "__name__", "") == "multiselect" or \
        kwargs.get("selection_mode") == "multi"


def _link_items(raw: list[str], *, many: bool, required: bool) -> list[str]:
    """A link's values as a widget takes them: for a widget of several values each value
    split at commas, empty items dropped (``regions=us-east-1,us-west-2``, as the CLI's
    ``split_csv`` reads ``--region``); for a ``required`` one, no empty value (it has none)."""
    if many:
        raw = [i for r in raw for i in ([j.strip() for j in r.split(",") if j.strip()]
                                        if "," in r else [r])]
    return [r for r in raw if r != ""] if required else raw


def _drop_params(keys) -> None:
    """``keys`` taken out of the URL at once (a message per key: quadratic in the names)."""
    qp = st.query_params
    try:
        qp.from_dict({k: qp.get_all(k) for k in qp if k not in keys})
    except st.errors.StreamlitAPIException:  # one is bound: each of the others alone
        for key in keys:
            _drop_param(key)


def _drop_param(key: str) -> None:
    """``key`` taken out of the URL, before its widget is bound to it."""
    try:
        if key in st.query_params:
            del st.query_params[key]
    except st.errors.StreamlitAPIException:
        pass  # bound already (Streamlit keeps what the widget shows)


def _set_param(key: str, value: str) -> None:
    """``key`` given one ``value`` in the URL, before its widget is bound to it."""
    try:
        st.query_params[key] = value
    except st.errors.StreamlitAPIException:
        pass  # bound already (Streamlit keeps what the widget shows)


def _whole_number_box(args: tuple, kwargs: dict) -> bool:
    """Whether a number_input holds whole numbers: Streamlit's rule, every number given to it
    (bounds, value, step) an int."""
    given = dict(zip(_NUMBER_INPUT_ARGS, args, strict=False)) | kwargs
    numbers = [given.get(k) for k in _NUMBER_INPUT_ARGS if given.get(k) is not None]
    return all(isinstance(v, int) and not isinstance(v, bool) for v in numbers)


def _plain_number(text: str, *, whole: bool = False) -> bool:
    """A link value a number widget can read: finite, at most ±2**53 and, for a ``whole``
    number box, a whole number (8.0 and 1e3 are), or not a number at all (Streamlit reports
    that itself); "" is no value."""
    try:
        number = float(text) if text != "" and len(text) <= 40 else None
    except ValueError:
        return True
    if number is None:
        return text == ""
    return abs(number) <= 2**53 and (not whole or number.is_integer())


def _empty_by_default(widget, args: tuple, kwargs: dict) -> bool:
    """Whether a text or number box starts empty (a box shown empty otherwise does not show
    its default: ``tokens=`` plans 20 tokens per parameter, not the default 50B)."""
    name = getattr(widget, "__name__", "")
    if name == "number_input":
        given = dict(zip(_NUMBER_INPUT_ARGS, args, strict=False)) | kwargs
        return given.get("value", "min") is None  # Streamlit's default: the least value
    return name != "text_input" or kwargs.get("value", args[0] if args else "") in (None, "")


def _shown(value, *, empty: str | None = None, blank: bool = True) -> str:
    if isinstance(value, bool):  # a checkbox: not Python's False
        return "ticked" if value else "unticked"
    if isinstance(value, list):
        # a multiselect left empty means all where its placeholder says so ("All clouds": the
        # page searches every cloud), which "showing none" denied
        means_all = empty is not None and empty.startswith(("All ", "Every "))
        return ", ".join(map(str, value)) or (empty[0].lower() + empty[1:] if means_all
                                              else "none")
    if value in (None, ""):
        # the box's placeholder says what empty means ("20 per parameter")
        return "the default" if blank else "it empty" + (f" ({empty})" if empty else "")
    return str(value)


def _unusable(raw: list[str], value) -> list[str] | None:
    """The raw values the widget did not take (None when it took the link's value)."""
    given = [r for r in raw if r != ""]
    if isinstance(value, list):
        taken = {str(v) for v in value}
        bad = [r for r in given if r not in taken]
        return bad or None
    if not given:
        return None
    last = given[-1]
    if isinstance(value, bool):
        return None if last.lower() == str(value).lower() else [last]
    if isinstance(value, int | float):
        try:
            return None if float(last) == float(value) else [last]
        except ValueError:
            return [last]
    return None if value is not None and last == str(value) else [last]


_CHOICE_WIDGETS = frozenset({"selectbox", "radio", "multiselect", "segmented_control", "pills"})


def _choices(widget, args: tuple, kwargs: dict) -> dict[str, object]:
    """A choice widget's options by how its link spells them (``format_func``'s words, as
    Streamlit matches them), in order; {} for another widget."""
    if getattr(widget, "__name__", "") not in _CHOICE_WIDGETS:
        return {}
    spell = kwargs.get("format_func") or str
    out: dict[str, object] = {}
    for option in args[0] if args else kwargs.get("options", ()):
        out.setdefault(str(spell(option)), option)  # the first option of a spelling
    return out


# ---- uploads -----------------------------------------------------------------------------------

UPLOAD_LIMIT_MB = {"config": 1, "probe report": 4, "team plan": 1}


def for_upload(key: str, data: bytes) -> str:
    """``key`` made new for every uploaded content, for a widget whose default depends on the
    upload: Streamlit ignores a widget's default once its key holds a value, so the probe
    report's accelerator box kept the choice made for the previous report (and ingesting
    calibrated the wrong GPU)."""
    import hashlib

    return f"{key}_{hashlib.sha256(data).hexdigest()[:16]}"


def upload(label: str, *, key: str, what: str, types: list[str], container=st):
    """A file uploader limited to ``UPLOAD_LIMIT_MB[what]``: (file name, bytes) or None.

    The limit is enforced here too: the browser's check is only advisory.
    """
    limit = UPLOAD_LIMIT_MB[what]
    # the widget keeps the page's limit: a larger one (to let the check below say why) made
    # the drop zone read "Limit 4MB per file" beside a 1 MB limit
    up = container.file_uploader(label, type=types, key=key, max_upload_size=limit)
    # said as text, always: a file over it is refused in the browser, said only in a hover
    # tooltip (the Team page went on "Upload a team plan to allocate it.")
    container.caption(f"A {what} is at most {limit} MB.")
    if up is None:
        return None
    data = up.getvalue()
    if len(data) > limit * 2**20:
        # in bytes: "1.0 MB; at most 1 MB" for a file 10 bytes over the limit read as no reason
        container.error(md(f"{up.name} is {len(data):,} bytes; a {what} is at most "
                           f"{limit * 2**20:,} bytes ({limit} MB). To fix: upload the right "
                           "file"),
                        icon=":material/error:")
        return None
    return up.name, data


def kept_upload(label: str, *, key: str, what: str, types: list[str], container=st):
    """``upload`` whose file survives the uploader not being shown (another page, or another
    choice that hides it) — Streamlit drops an unshown widget's state: a file cannot be put
    back into an uploader, so it is kept and used, with a caption saying so, until the user
    uploads another or removes one from the uploader."""
    kept, restored = f"{key}_kept", f"{key}_restored"
    if key not in st.session_state:  # the uploader is new: first shown, or shown again
        st.session_state[restored] = kept in st.session_state
    up = upload(label, key=key, what=what, types=types, container=container)
    if st.session_state.get(key) is not None:  # a file in it (too large: ``up`` is None)
        st.session_state[restored] = False
        st.session_state[kept] = up
    elif not st.session_state.get(restored):  # the user removed the file
        st.session_state[kept] = None
    if st.session_state.get(restored) and st.session_state.get(kept):
        container.caption(md(f"Using {st.session_state[kept][0]}, uploaded earlier: upload a "
                             "file to replace it."))
        return st.session_state[kept]
    return up
