# Build a folder of threefish-gen files (C, SIMD C, NASM x86-64) into a static library and install
# it with its headers and a pkg-config file (`threefish-gen paths --backend-mk` prints where this file
# is).  Copy it next to the rendered files, then:
#
#   make -f backend.mk install PREFIX=$HOME/.local NAME=threefish
#   pkg-config --cflags --libs threefish          # with PKG_CONFIG_PATH=$HOME/.local/lib/pkgconfig
#
# Every *.c and *.asm in the folder goes into lib$(NAME).a; every *.h into include/$(NAME)/.
NAME ?= threefish
PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
AR ?= ar
NASM ?= nasm
CFLAGS ?= -O2
NASMFLAGS ?= -f elf64

C_SRCS := $(wildcard *.c)
ASM_SRCS := $(wildcard *.asm)
HEADERS := $(wildcard *.h)
OBJS := $(C_SRCS:.c=.o) $(ASM_SRCS:.asm=.o)
# the generator version every header records (<PREFIX>VERSION "x.y.z")
VERSION := $(shell sed -n 's/^\#define [A-Za-z0-9_]*_VERSION "\(.*\)"$$/\1/p' $(firstword $(HEADERS)) | head -n 1)

all: lib$(NAME).a $(NAME).pc

%.o: %.c
	$(CC) $(CFLAGS) -fPIC -c $< -o $@

%.o: %.asm
	$(NASM) $(NASMFLAGS) $< -o $@

lib$(NAME).a: $(OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(NAME).pc:
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include/$(NAME)' '' \
	  'Name: $(NAME)' 'Description: Threefish block cipher (threefish-gen)' 'Version: $(VERSION)' \
	  'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -l$(NAME)' > $@

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/$(NAME)
	install -m 644 lib$(NAME).a $(DESTDIR)$(PREFIX)/lib/
	install -m 644 $(HEADERS) $(DESTDIR)$(PREFIX)/include/$(NAME)/
	install -m 644 $(NAME).pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/

clean:
	rm -f $(OBJS) lib$(NAME).a $(NAME).pc

.PHONY: all install clean
