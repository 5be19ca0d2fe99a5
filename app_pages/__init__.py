"""The pages of gpuplan's Streamlit app (app.py is the router)."""
