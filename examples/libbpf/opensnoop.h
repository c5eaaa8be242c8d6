/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __OPENSNOOP_H
#define __OPENSNOOP_H

#define NAME_MAX 255

struct args_t {
	const char *fname;
	int flags;
	unsigned int mode;
};

struct event {
	/* user terminology for pid: */
	__u64 ts;
	pid_t pid;
	uid_t uid;
	int ret;
	int flags;
	unsigned int mode;
	char comm[16];
	char fname[NAME_MAX];
};

#endif
