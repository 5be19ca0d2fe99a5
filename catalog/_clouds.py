"""The clouds gpuplan knows: the one place each is named, with what differs between them.

``CLOUDS`` maps a cloud's name to its ``Cloud`` record. Iterating it gives the names in a fixed
order (``for c in CLOUDS``, ``c in CLOUDS``, ``", ".join(CLOUDS)`` all work on names), so code
that only needs names never touches the records.

Region kinds. A price list names more places than the regions users think of: AWS Local Zones
(``us-east-1-atl-1``), Wavelength Zones (``us-east-1-wl1-bos1``) and GovCloud
(``us-gov-west-1``), Azure Government (``usgovvirginia``). Each is a region of its own in the
catalog — its own prices, its own offers — so a filter on ``us-east-1`` matches exactly
``us-east-1`` and never silently includes a Local Zone priced differently. ``region_kind``
says which kind a region is and ``parent_region`` which region a zone hangs off.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping

from ._record import record

REGION_KINDS: tuple[str, ...] = ("region", "local_zone", "wavelength_zone", "govcloud", "china")

# AWS zone codes, from the Price List's regionCode values (the reference's 94 region codes and
# docs.aws.amazon.com/local-zones/latest/ug/available-local-zones.html):
#   Local Zone       <parent>-<metro>-<n>        us-east-1-atl-1, us-west-2-lax-1
#   Wavelength Zone  <parent>-wl<n>[-<metro>]    us-east-1-wl1, us-east-1-wl1-bos1
_AWS_WAVELENGTH = re.compile(r"^(?P<parent>[a-z]{2}(?:-gov)?-[a-z]+-\d+)-wl\d+(?:-[a-z0-9]+)?$")
_AWS_LOCAL = re.compile(r"^(?P<parent>[a-z]{2}(?:-gov)?-[a-z]+-\d+)-[a-z]{3}-\d+[a-z]?$")


def install_hint(extra: str) -> str:
    """How to install one of gpuplan's extras (aws, gcp, azure, app, report, probes): from the
    checkout, as gpuplan is on no package index — `pip install 'gpuplan[aws]'` finds nothing
    there, or another project's package of that name."""
    return f"pip install -e '.[{extra}]' in the gpuplan checkout"


@record
class Cloud:
    """One cloud provider and the facts about it that code elsewhere must not hard-wire.

    ``spot_interruptions_per_hour`` is the rate assumed for a spot offer that carries none of
    its own (interruptions per instance-hour); ``spot_to_on_demand_max`` the documented upper
    bound on a spot price as a fraction of on-demand (None where the cloud documents none
    beyond on-demand itself); ``sdk_extra`` the pip extra that installs the cloud's SDK.
    """

    name: str
    display_name: str
    sdk_extra: str
    spot_interruptions_per_hour: float
    spot_interruptions_source: str
    spot_to_on_demand_max: float | None
    spot_bound_source: str

    @property
    def install_hint(self) -> str:
        return install_hint(self.sdk_extra)

    def region_kind(self, region: str) -> str:
        """One of REGION_KINDS."""
        if self.name == "aws":
            if region.startswith("us-gov-"):
                return "govcloud"
            if region.startswith("cn-"):
                return "china"
            if _AWS_WAVELENGTH.match(region):
                return "wavelength_zone"
            if _AWS_LOCAL.match(region):
                return "local_zone"
        if self.name == "azure" and region.startswith(("usgov", "usdod")):
            return "govcloud"
        if self.name == "azure" and region.startswith("china"):
            return "china"
        return "region"

    def parent_region(self, region: str) -> str:
        """The region a Local or Wavelength Zone hangs off; the region itself otherwise."""
        if self.name == "aws":
            for pattern in (_AWS_WAVELENGTH, _AWS_LOCAL):
                match = pattern.match(region)
                if match:
                    return match.group("parent")
        return region


class _Registry(Mapping[str, Cloud]):
    """A read-only, ordered name → Cloud mapping (iteration yields names)."""

    def __init__(self, clouds: tuple[Cloud, ...]) -> None:
        self._by_name = {c.name: c for c in clouds}

    def __getitem__(self, name: str) -> Cloud:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def __repr__(self) -> str:
        return f"CLOUDS({', '.join(self._by_name)})"


CLOUDS: Mapping[str, Cloud] = _Registry((
    Cloud(
        name="aws", display_name="AWS", sdk_extra="aws",
        # Assumption (see planner Assumptions): AWS publishes only monthly advisor buckets;
        # large GPU instances see far more, so one interruption per ~100 instance-hours.
        spot_interruptions_per_hour=0.01,
        spot_interruptions_source="assumption: one interruption per ~100 instance-hours "
                                  "(AWS publishes only monthly Spot Instance Advisor buckets)",
        # AWS documents discounts "up to 90%" and a default maximum price of the on-demand
        # price: no bound tighter than on-demand itself (rule spot_not_below_on_demand).
        spot_to_on_demand_max=None,
        spot_bound_source="aws.amazon.com/ec2/spot/pricing: 'up to 90%' off, default maximum "
                          "price = on-demand (no tighter documented bound)",
    ),
    Cloud(
        name="gcp", display_name="Google Cloud", sdk_extra="gcp",
        # GCP's preemptible VMs lived at most 24 h; Spot VMs keep that as the planning bound.
        spot_interruptions_per_hour=1 / 24,
        spot_interruptions_source="assumption: at most 24 h between preemptions (the old "
                                  "preemptible VM limit, cloud.google.com/compute/docs/"
                                  "instances/preemptible)",
        # cloud.google.com/compute/docs/instances/spot: "Spot VMs ... 60-91% discount".
        spot_to_on_demand_max=0.40,
        spot_bound_source="cloud.google.com/compute/docs/instances/spot: Spot VMs are offered "
                          "at a 60-91% discount, so spot <= 40% of on-demand",
    ),
    Cloud(
        name="azure", display_name="Azure", sdk_extra="azure",
        spot_interruptions_per_hour=0.01,
        spot_interruptions_source="assumption: one interruption per ~100 instance-hours "
                                  "(Azure publishes only coarse eviction-rate ranges)",
        spot_to_on_demand_max=None,
        spot_bound_source="azure.microsoft.com/pricing/spot-advisor: 'up to 90%' off; price "
                          "capped at pay-as-you-go (no tighter documented bound)",
    ),
))


# -- AWS Spot Instance Advisor buckets → an hourly interruption rate ---------------------------
# The advisor (aws.amazon.com/ec2/spot/instance-advisor, data at spot-bid-advisor.s3.amazonaws.
# com/spot-advisor-data.json) publishes, per region and instance type, a bucket of the
# "frequency of interruption": the rate at which Spot reclaimed capacity during the trailing
# month, as one of "<5%", "5-10%", "10-15%", "15-20%", ">20%". It is a share of instances per
# month, not a rate per hour. Turning it into one:
#
#   f = the bucket's upper edge (5 %, 10 %, 15 %, 20 %): the pessimistic end of the bucket;
#   an instance running a whole month (730 h = 8,760 h / 12) with interruptions arriving as a
#   Poisson process of rate λ per hour is interrupted at least once with probability
#   1 − exp(−730 λ); setting that to f gives  λ = −ln(1 − f) / 730.
#
#   "<5%" → 7.0e-5/h, "5-10%" → 1.4e-4/h, "10-15%" → 2.2e-4/h, "15-20%" → 3.1e-4/h.
#   ">20%" has no upper edge: no rate is derived and the cloud's default applies
#   (CLOUDS["aws"].spot_interruptions_per_hour, itself far more pessimistic).
#
# The month-long-instance assumption makes λ a lower bound for instances that run shorter: the
# planner treats the figure as the cloud's statement, not a measurement of large GPU fleets.
HOURS_PER_MONTH = 8760.0 / 12
AWS_ADVISOR_BUCKETS: dict[str, float | None] = {
    "<5%": 0.05, "5-10%": 0.10, "10-15%": 0.15, "15-20%": 0.20, ">20%": None}


def aws_bucket_rate(bucket: str) -> float | None:
    """Interruptions per instance-hour for an AWS advisor bucket label (see above)."""
    edge = AWS_ADVISOR_BUCKETS.get(bucket.strip())
    if edge is None:
        return None
    return round(-math.log(1.0 - edge) / HOURS_PER_MONTH, 8)


def region_kind(cloud: str, region: str) -> str:
    return CLOUDS[cloud].region_kind(region)


__all__ = ["AWS_ADVISOR_BUCKETS", "CLOUDS", "REGION_KINDS", "Cloud", "aws_bucket_rate",
           "region_kind"]
