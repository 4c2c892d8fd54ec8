"""evalkit inside other tools: a pytest plug-in (`pytest --evalkit CONFIG`)."""
