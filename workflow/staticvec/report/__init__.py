"""Reports: tables of our numbers beside the papers', figures, the run manifest."""
