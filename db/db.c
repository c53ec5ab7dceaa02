/* placeholder: module under construction */
extern int fbc_placeholder_db;
