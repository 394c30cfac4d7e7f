"""advisor: can this Galera cluster span these sites, or must each site run its own?"""

__version__ = "0.1.0"
