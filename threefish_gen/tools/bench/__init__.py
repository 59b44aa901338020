"""``threefish-gen bench``: run.py builds and times the rows, row_bounds.py puts a speed bound
beside each (bounds.py over the port models of ports.py), chart.py draws them, dotnet.py and
skein_rows.py add the C# and Skein sections; harness/ holds the timing programs (package data)."""
