# gdb -batch -x gdb_values.py PROGRAM, with FUNCS="f g ..." in the environment: prints, for
# every call of those functions, "CALL f" with gdb's `info args` (stopped after the prologue,
# as `break f` does), and "RET f = VALUE" for what `finish` would print. The reference values
# tests/e2e/60-args-gdb.sh compares calltrace's -A -R values with.
import os

import gdb


class Return(gdb.FinishBreakpoint):
    def __init__(self, frame, name):
        super().__init__(frame, internal=True)
        self.name = name

    def stop(self):
        if self.return_value is not None:
            print("RET %s = %s" % (self.name, self.return_value.format_string()))
        return False

    def out_of_scope(self):
        pass


class Entry(gdb.Breakpoint):
    def stop(self):
        frame = gdb.selected_frame()
        name = frame.name()
        print("CALL " + name)
        for line in gdb.execute("info args", to_string=True).splitlines():
            if line != "No arguments.":
                print("  " + line)
        Return(frame, name)
        return False


gdb.execute("set pagination off")
gdb.execute("set confirm off")
for f in os.environ["FUNCS"].split():
    Entry(f)
gdb.execute("run")
