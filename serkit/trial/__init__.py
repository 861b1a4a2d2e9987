"""`serkit try`: every codec on the user's own documents, measured here without asv."""
