"""Importers: public benchmark cases converted into evalkit scenarios."""
