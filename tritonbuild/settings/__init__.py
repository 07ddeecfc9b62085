"""The one settings model: every setting declared once; flags, recipe keys and docs come from it."""
