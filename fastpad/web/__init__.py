"""Server-rendered pages that work without JavaScript: sign-in, review, Agent activity."""
