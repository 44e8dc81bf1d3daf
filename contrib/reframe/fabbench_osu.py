# fabbench's OSU suites as ReFrame tests: `fabbench run` is given OSU's own command line
# (-m, -x, -i, -c and the buffer locations H H that ReFrame's OSU tests append), its output is
# OSU's text layout, and the metric is read off it the way ReFrame reads OSU's. Run on an
# emulated fabric the numbers are in virtual time: exact and the same on any machine.
#
#   reframe -C contrib/reframe/settings.py -c contrib/reframe/fabbench_osu.py -r \
#           -S fabbench=/path/to/fabbench
#
# scripts/reframe-check.sh installs ReFrame in a scratch venv and runs exactly that.

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, performance_function, run_before, sanity_function, variable


@rfm.simple_test
class fabbench_osu(rfm.RunOnlyRegressionTest):
    '''One OSU suite of fabbench on one fabric, read as ReFrame reads OSU's output.'''

    valid_systems = ['*']
    valid_prog_environs = ['*']
    # The fabbench binary; -S fabbench=PATH when it is not on PATH.
    fabbench = variable(str, value='fabbench')
    # (suite, the metric OSU prints, its unit)
    benchmark = parameter([
        ('osu_latency', 'latency', 'us'),
        ('osu_bw', 'bandwidth', 'MB/s'),
    ], fmt=lambda b: b[0])
    fabric = parameter(['rapidio'])
    # The message size whose value becomes the performance variable.
    size = variable(int, value=8)
    num_tasks = 1
    tags = {'fabbench', 'osu'}

    @run_before('run')
    def set_command_line(self):
        suite = self.benchmark[0]
        self.descr = f'fabbench {suite} on {self.fabric}'
        self.executable = self.fabbench
        # OSU's options, then its buffer locations: host memory on both ranks.
        self.executable_opts = [
            'run', suite, '-f', self.fabric, '-o', 'fabbench-results',
            '-m', str(self.size), '-x', '10', '-i', '1000', '-c', 'H', 'H',
        ]

    @sanity_function
    def every_size_validated(self):
        rows = sn.findall(r'^\d+\s+\S+\s+(\S+)\s*$', self.stdout)
        return sn.all([
            sn.assert_found(r'^# OSU MPI', self.stdout),
            sn.assert_gt(sn.count(rows), 0),
            sn.all(sn.map(lambda m: sn.assert_eq(m.group(1), 'Pass'), rows)),
        ])

    @performance_function('us')
    def latency(self):
        return sn.extractsingle(rf'^{self.size}\s+(\S+)', self.stdout, 1, float)

    @performance_function('MB/s')
    def bandwidth(self):
        return sn.extractsingle(rf'^{self.size}\s+(\S+)', self.stdout, 1, float)

    @run_before('performance')
    def set_perf_variables(self):
        name = self.benchmark[1]
        self.perf_variables = {name: getattr(self, name)()}
