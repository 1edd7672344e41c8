"""One module per benchmark (a paper's method), each registered once with registry.py."""
