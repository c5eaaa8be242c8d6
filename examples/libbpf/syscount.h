/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __SYSCOUNT_H
#define __SYSCOUNT_H

struct data_t {
	__u64 count;
	__u64 total_ns;
	__u64 max_ns;
	char comm[16];
};

#endif
