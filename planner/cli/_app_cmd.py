"""`gpuplan app`: launch the Streamlit app (filled in by the app work)."""
