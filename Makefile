# calltrace - trace the function calls of native programs from the outside.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
DESTDIR ?=

CC ?= gcc
PKGS := libdw libelf capstone libcjson libbsd libmicrohttpd zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

OPT ?= -O2
CFLAGS ?= $(OPT) -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS) -lstdc++ -lm

# `make SANITIZE=1` (and `make check SANITIZE=1`) builds with AddressSanitizer and
# UndefinedBehaviorSanitizer into a build directory of its own, build/sanitize/calltrace, so
# sanitized and normal objects never mix. Any sanitizer report fails the test that caused it
# (tests/run.sh collects them). `make check VALGRIND=1` runs the suite's calltrace under
# valgrind memcheck instead (tests/lib/valgrind-calltrace).
ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
BUILD := build/sanitize
TEST_BUILD := tests/build/sanitize
CALLTRACE_BIN := $(BUILD)/calltrace
else
BUILD := build/normal
TEST_BUILD := tests/build
CALLTRACE_BIN := calltrace
endif
ifeq ($(VALGRIND),1)
ifeq ($(SANITIZE),1)
$(error VALGRIND=1 and SANITIZE=1 do not mix: valgrind cannot run sanitized binaries)
endif
CHECK_CALLTRACE := CALLTRACE=$(CURDIR)/tests/lib/valgrind-calltrace \
	CALLTRACE_REAL=$(CURDIR)/$(CALLTRACE_BIN) VALGRIND_BIN=$(shell command -v valgrind) \
	TEST_TIMEOUT=600 CT_TIMEOUT=500
else
CHECK_CALLTRACE := CALLTRACE=$(CURDIR)/$(CALLTRACE_BIN)
endif

# `make V=1` shows the full commands.
ifeq ($(V),1)
Q :=
quiet = @true
else
Q := @
quiet = @printf '  %-7s %s\n'
endif

SRCS := $(wildcard src/*.c src/*/*.c src/*/*/*.c)
# Assembly (the inject engine's trampolines): gcc runs the C preprocessor over .S files, so they
# include the same headers as the C code (under __ASSEMBLER__).
ASM_SRCS := $(wildcard src/*/*.S src/*/*/*.S)
ASFLAGS := -g -D_GNU_SOURCE -Isrc
OBJS := $(SRCS:%.c=$(BUILD)/%.o) $(ASM_SRCS:%.S=$(BUILD)/%.o)
LIB_OBJS := $(filter-out $(BUILD)/src/main.o,$(OBJS))

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(TEST_BUILD)/unit/%)

# Fuzz targets (tests/fuzz/fuzz_NAME.c): libFuzzer, so clang, with ASan and UBSan, over the
# library objects compiled again by clang into build/fuzz.
FUZZ_CC ?= clang
FUZZ_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -O1 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc $(PKG_CFLAGS) \
	$(FUZZ_FLAGS)
FUZZ_OBJS := $(LIB_OBJS:$(BUILD)/%=build/fuzz/%)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=tests/build/fuzz/%)
FUZZ_SECONDS ?= 600

all: $(CALLTRACE_BIN) examples/demo

$(CALLTRACE_BIN): $(OBJS)
	$(quiet) LINK $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(quiet) CC $<
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/%.o: %.S
	@mkdir -p $(dir $@)
	$(quiet) AS $<
	$(Q)$(CC) $(ASFLAGS) -MMD -MP -c -o $@ $<

examples/demo: examples/demo.c
	$(quiet) CC $<
	$(Q)$(CC) -O0 -g -o $@ $<

$(TEST_BUILD)/unit/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(quiet) CC $<
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

unit: $(UNIT_BINS)

# A synthetic record of any size, for timing report/graph/tree (bench/report-bench.sh).
bench/gen-record: bench/gen-record.c $(LIB_OBJS)
	$(quiet) CC $<
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

# The inject engine's trampolines timed alone, inside one process (bench/tramp-bench.c).
bench/tramp-bench: bench/tramp-bench.c $(LIB_OBJS)
	$(quiet) CC $<
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

build/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(quiet) FUZZCC $<
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

build/fuzz/%.o: %.S
	@mkdir -p $(dir $@)
	$(quiet) FUZZAS $<
	$(Q)$(FUZZ_CC) $(ASFLAGS) -MMD -MP -c -o $@ $<

tests/build/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(quiet) FUZZLD $@
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LDLIBS)

fuzz-build: $(FUZZ_BINS)
.SECONDARY: $(FUZZ_OBJS)

# Long fuzzing runs: FUZZ_SECONDS per target (default 600), FUZZ_TARGETS to pick some.
fuzz: fuzz-build
	bash tests/fuzz/run.sh --seconds $(FUZZ_SECONDS) $(FUZZ_TARGETS)

check: all unit fuzz-build bench/gen-record bench/tramp-bench
	$(CHECK_CALLTRACE) UNIT_DIR=$(CURDIR)/$(TEST_BUILD)/unit bash tests/run.sh $(TESTS)

# Soak runs (not in make check): tests/soak/*.sh, which kill calltrace at chosen moments of
# attachments; the test programs come from make check's builds.
soak: all
	$(Q)rc=0; for t in tests/soak/*.sh; do CALLTRACE=$(CURDIR)/calltrace bash $$t || rc=1; done; exit $$rc

bench: calltrace bench/tramp-bench
	bash bench/bench.sh

# What `make install` puts, each file from where: `make uninstall` removes these and nothing else.
INSTALLED := $(BINDIR)/calltrace $(MANDIR)/man1/calltrace.1 $(BASHCOMPDIR)/calltrace \
	$(ZSHCOMPDIR)/_calltrace

install: calltrace
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR)
	install -m 0755 calltrace $(DESTDIR)$(BINDIR)/calltrace
	install -m 0644 man/calltrace.1 $(DESTDIR)$(MANDIR)/man1/calltrace.1
	install -m 0644 scripts/completion/calltrace.bash $(DESTDIR)$(BASHCOMPDIR)/calltrace
	install -m 0644 scripts/completion/_calltrace $(DESTDIR)$(ZSHCOMPDIR)/_calltrace

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))

format:
	clang-format -i $(SRCS) $(wildcard src/*.h src/*/*.h src/*/*/*.h) $(UNIT_SRCS) \
		$(FUZZ_SRCS) tests/fuzz/fuzz.h $(wildcard tests/unit/*.h tests/progs/*.c \
		tests/progs/*.h bench/*.c)

clean:
	rm -rf build tests/build calltrace examples/demo bench/gen-record bench/tramp-bench

.PHONY: all check unit bench install uninstall format clean fuzz fuzz-build soak
-include $(OBJS:.o=.d) $(FUZZ_OBJS:.o=.d)
