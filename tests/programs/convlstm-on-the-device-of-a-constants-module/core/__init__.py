"""Constants shared by the model and the scripts."""
