"""One module per operator command."""
