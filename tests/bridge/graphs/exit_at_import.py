"""exit_at_import: prints, then leaves the interpreter with status 4 while it is being imported."""
import os

print("configuring the app")
print("no API key found: giving up")
os._exit(4)
