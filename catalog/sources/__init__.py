"""One source per cloud, each turning that cloud's own APIs into catalog records.

Cloud SDKs (boto3, google-cloud-*, azure-*) are imported inside ``fetch`` only, so importing
this package needs none of them. ``catalog._refresh.refresh_catalog`` drives the sources.
"""

from ._common import CloudData, Progress, RefreshError, Source, SourceUnavailable
from .aws import AwsSource
from .azure import RETAIL_PRICES_URL, AzureSource
from .gcp import GcpSource

__all__ = ["RETAIL_PRICES_URL", "AwsSource", "AzureSource", "CloudData", "GcpSource", "Progress",
           "RefreshError", "Source", "SourceUnavailable"]
