"""The Streamlit glue the pages share, one job per module; CONTRIBUTING.md has the table of which does what.
Pages import the modules by name (`from ui import models, widgets`); nothing is re-exported here."""
