"""``UnknownNameError``'s "names separated by spaces" for names with aliases: with
``resolves``, each word counts when the resolver takes it (the CLI's --gpu "H100 A10G"
shares this wording with every other list of names)."""

from __future__ import annotations

import pytest

from catalog import GpuplanError, UnknownNameError, check_names

ALIASES = {"h100": "H100-SXM5-80GB", "a10g": "A10G"}


def resolve(name: str) -> str:
    try:
        return ALIASES[name.casefold()]
    except KeyError:
        raise GpuplanError(f"unknown {name}") from None


def test_aliases_separated_by_spaces_are_named_as_typed():
    error = UnknownNameError("GPU", "H100 a10g", (), where="--gpu", resolves=resolve)
    assert error.spaced == ("H100", "a10g")
    assert str(error) == ("--gpu: unknown GPU 'H100 a10g'. It is 2 GPU names separated by "
                          "spaces. To fix: separate them with commas: H100,a10g")


def test_a_word_the_resolver_refuses_is_one_unknown_name():
    error = UnknownNameError("GPU", "H100 B300", (), resolves=resolve)
    assert error.spaced == () and "separated by spaces" not in str(error)


def test_known_names_without_a_resolver_are_matched_as_before():
    error = UnknownNameError("cloud", "AWS gcp", ("aws", "gcp", "azure"))
    assert error.spaced == ("aws", "gcp") and "commas: aws,gcp" in str(error)


def test_the_fix_is_the_whole_list_with_commas():
    """`--gpu "A100,H100 A10G"` was told to write "H100,A10G": the A100 it had was dropped."""
    listed = ["A100", "H100 a10g", "L4"]
    error = UnknownNameError("GPU", "H100 a10g", (), resolves=resolve, listed=listed)
    assert str(error).endswith("To fix: separate them with commas: A100,H100,a10g,L4")


def test_check_names_fixes_the_whole_list_and_names_its_field():
    with pytest.raises(UnknownNameError) as caught:
        check_names("cloud", ["aws", "GCP azure"], ("aws", "gcp", "azure"),
                    spell=str.lower, field="clouds")
    assert caught.value.field == "clouds"
    assert str(caught.value).endswith("commas: aws,gcp,azure")
