"""Fastpad: a self-hostable notes and knowledge base for people who work with AI agents."""

__version__ = "0.1.0"
