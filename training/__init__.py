"""Training and evaluation tools for Moon River agents."""
