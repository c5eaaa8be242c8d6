/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What libbpf-tools add on top of libbpf's headers, for the libbpf 1.1 headers of Debian 12. */
#ifndef __PROBEYARD_LIBBPF_COMPAT_H
#define __PROBEYARD_LIBBPF_COMPAT_H

/* libbpf >= 1.2 defines it in bpf_helpers.h (the same definition). */
#ifndef bpf_ksym_exists
#define bpf_ksym_exists(sym) ({							\
	_Static_assert(!__builtin_constant_p(!!sym), #sym " should be marked as __weak");	\
	!!sym;									\
})
#endif

#define TASK_COMM_LEN 16
#define MAX_ENTRIES 10240
#define INVALID_UID ((uid_t)-1)

#endif
