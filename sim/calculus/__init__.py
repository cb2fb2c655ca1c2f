"""protomesh.calculus"""
