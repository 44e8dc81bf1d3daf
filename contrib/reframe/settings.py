# A minimal ReFrame site configuration for fabbench's tests: this host, the local scheduler
# and launcher (fabbench starts its own ranks; emulated fabrics run them as threads).

site_configuration = {
    'systems': [
        {
            'name': 'local',
            'descr': 'this host',
            'hostnames': ['.*'],
            'partitions': [
                {
                    'name': 'default',
                    'descr': 'this host, local scheduler',
                    'scheduler': 'local',
                    'launcher': 'local',
                    'environs': ['builtin'],
                }
            ],
        }
    ],
    'environments': [
        {'name': 'builtin', 'cc': 'cc', 'cxx': '', 'ftn': ''},
    ],
}
