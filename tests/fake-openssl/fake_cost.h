#define FAKE_COST 100
