"""internals"""
