/* placeholder: module under construction */
extern int fbc_placeholder_semver_semver_c;
