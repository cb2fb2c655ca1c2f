"""protomesh.interop"""
