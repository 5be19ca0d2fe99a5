"""gpuplan's Streamlit app: `gpuplan app` (or `streamlit run app.py`).

The router only: each page in app_pages/ holds its widgets and charts and calls the public
functions of `planner` and `catalog`; none of them models anything.
"""

import streamlit as st

st.set_page_config(page_title="gpuplan", page_icon=":material/calculate:", layout="wide")

PAGES = [
    # the default page is served at "/" (a shared plan link is "/?deadline=14d&…")
    st.Page("app_pages/plan.py", title="Plan", icon=":material/calculate:", default=True),
    st.Page("app_pages/catalog.py", title="Catalog", icon=":material/sell:",
            url_path="catalog"),
    st.Page("app_pages/probes.py", title="Probes", icon=":material/speed:", url_path="probes"),
    st.Page("app_pages/team.py", title="Team budget", icon=":material/groups:",
            url_path="team"),
]

st.navigation(PAGES, position="top").run()
