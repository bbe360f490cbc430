"""Resolvers shared by many rules: names, devices in scope, values and classes across files."""
