# calltrace - trace the function calls of native programs from the outside.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=

CC ?= gcc
PKGS := libdw libelf capstone libcjson libbsd libmicrohttpd zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

OPT ?= -O2
CFLAGS ?= $(OPT) -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS) -lstdc++

ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif

# `make V=1` shows the full commands.
ifeq ($(V),1)
Q :=
quiet = @true
else
Q := @
quiet = @printf '  %-7s %s\n'
endif

BUILD := build
SRCS := $(wildcard src/*.c src/*/*.c src/*/*/*.c)
OBJS := $(SRCS:%.c=$(BUILD)/%.o)
LIB_OBJS := $(filter-out $(BUILD)/src/main.o,$(OBJS))

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=tests/build/unit/%)

all: calltrace examples/demo

calltrace: $(OBJS)
	$(quiet) LINK $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(quiet) CC $<
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

examples/demo: examples/demo.c
	$(quiet) CC $<
	$(Q)$(CC) -O0 -g -o $@ $<

tests/build/unit/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(quiet) CC $<
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

unit: $(UNIT_BINS)

# A synthetic record of any size, for timing report/graph/tree (bench/report-bench.sh).
bench/gen-record: bench/gen-record.c $(LIB_OBJS)
	$(quiet) CC $<
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

check: all unit bench/gen-record
	CALLTRACE=$(CURDIR)/calltrace bash tests/run.sh $(TESTS)

bench: calltrace
	bash bench/bench.sh

install: calltrace
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 0755 calltrace $(DESTDIR)$(BINDIR)/calltrace
	install -m 0644 man/calltrace.1 $(DESTDIR)$(MANDIR)/man1/calltrace.1

format:
	clang-format -i $(SRCS) $(wildcard src/*.h src/*/*.h src/*/*/*.h) $(UNIT_SRCS)

clean:
	rm -rf $(BUILD) tests/build calltrace examples/demo bench/gen-record

.PHONY: all check unit bench install format clean
-include $(OBJS:.o=.d)
