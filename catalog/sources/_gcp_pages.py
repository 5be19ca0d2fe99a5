"""The Cloud Billing catalog's SKU lists over plain HTTPS (the API-key way), page by page.

``GET {billing}/v1/{service}/skus?key=…&pageSize=5000[&pageToken=…]`` answers
``{"skus": [...], "nextPageToken": "…"}``; an empty or missing token ends the list. What
a list must be before anything is priced from it:

- its pages end: a token already followed is a loop (one server repeated its token: ~4,400
  requests in 6 s, memory growing), and past ``MAX_SKU_PAGES`` pages it is not a price list;
- it has SKUs: a list answered with none, or under another name (``skuList``), "refreshed"
  no price, and ``--prune`` then removed every GCP offer.
"""

from __future__ import annotations

import urllib.parse

from ._common import RefreshError
from ._http import get_json

CLOUD = "gcp"
API_KEY_ENV = "GOOGLE_CLOUD_API_KEY"
PAGE_SIZE = 5000
MAX_SKU_PAGES = 100  # Compute Engine lists some 40,000 SKUs: ~8 pages of 5,000
# A page of 5,000 SKUs is ~5-10 MB of JSON; the 256 MiB default would let one bad answer
# hold that much (and several times it once parsed).
MAX_PAGE_BYTES = 32 * 2**20
PAGE_DEADLINE_S = 180.0  # one page, retries included
# A 401/403 is the key (or its project), not the service: waiting does not help.
KEY_REFUSED = (f"check {API_KEY_ENV}: it must be an API key of a project with the Cloud "
               "Billing API enabled (or unset it and use `gcloud auth application-default "
               "login` credentials)")
_RETRY = "To fix: retry later, or leave gcp out with --cloud"


def rest_skus(billing_url: str, service: str, key: str, *, timeout_s: float,
              first: bool) -> list[dict]:
    """Every SKU of ``service`` (``services/<id>``); RefreshError for a list that loops,
    does not end, or has no SKUs (see the module docstring)."""
    skus: list = []
    followed: set[str] = set()
    token, named, other_keys = "", False, set()
    while True:
        query = {"key": key, "pageSize": PAGE_SIZE, **({"pageToken": token} if token else {})}
        url = f"{billing_url}/v1/{service}/skus?{urllib.parse.urlencode(query)}"
        page = get_json(url, cloud=CLOUD, first=first and not token,
                        timeout_s=timeout_s, max_bytes=MAX_PAGE_BYTES,
                        deadline_s=PAGE_DEADLINE_S, denied_fix=KEY_REFUSED)
        if not isinstance(page, dict):
            raise _no_skus_member(service, f"a JSON {type(page).__name__}, not an object")
        named = named or "skus" in page
        other_keys |= set(page) - {"skus", "nextPageToken"}
        listed = page.get("skus") or []
        if not isinstance(listed, list):
            raise _no_skus_member(service, f'"skus" is a {type(listed).__name__}, not a list')
        skus += listed
        token = page.get("nextPageToken") or ""
        if not token:
            break
        if not isinstance(token, str):
            raise _no_skus_member(service, "nextPageToken is not a string")
        if token in followed:
            shown = token if len(token) <= 40 else token[:40] + "…"
            raise RefreshError(f"gcp: the billing API returned page token {shown!r} twice for "
                               f"{service}: its pages lead back to one already read. {_RETRY}")
        if len(followed) + 1 >= MAX_SKU_PAGES:
            raise RefreshError(f"gcp: the billing API's SKU list for {service} goes on past "
                               f"{MAX_SKU_PAGES:,} pages of {PAGE_SIZE:,}. {_RETRY}")
        followed.add(token)
    if not skus and not named and other_keys:
        shown = ", ".join(sorted(other_keys)[:5])
        raise _no_skus_member(service, f"it has {shown}; has the API's format changed?")
    if not skus:
        raise no_skus(service, f"retry, or check the API key's project ({API_KEY_ENV})")
    return skus


def no_skus(service: str, fix: str) -> RefreshError:
    """The list of ``service`` was empty: every price would be missing."""
    return RefreshError(f"gcp: the billing API returned no SKUs for {service}, so nothing "
                        f"could be priced. To fix: {fix}, or leave gcp out with --cloud")


def _no_skus_member(service: str, what: str) -> RefreshError:
    return RefreshError(f'gcp: the billing API\'s answer for {service} has no "skus" list '
                        f"({what}). To fix: retry later; if it persists, gpuplan needs an "
                        "update — leave gcp out with --cloud meanwhile")
