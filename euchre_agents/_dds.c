/* Double-dummy search and layout sampling for Euchre, as a small CPython extension.
 *
 * Nothing here knows a rule of its own: the card tables (effective suit and trick strength per
 * trump, built by euchre_env.cards.Deck) are handed in by Python, and the rest is "follow the suit
 * led if you can; the strongest card of the trick wins and leads next", which is how the engine
 * plays tricks. Seats are 0..3, teams are seat & 1, and inactive seats (sitting out) never play.
 *
 * Solver(effective_suit, trick_strength, num_cards)
 *     effective_suit: int8 buffer [4 trumps][C]; trick_strength: int16 buffer [4 trumps][4 led][C].
 * Solver.solve(hands, trump, leader, active, trick, need, out, moves)
 *     R positions: hands uint64 [R][4] (bit c = card c), trump int8 [R], leader int8 [R],
 *     active uint8 [R] (bit s = seat s plays), trick int16 [R][4] (card each seat has put on the
 *     current trick, -1 none). moves == 0: out int8 [R] = tricks team 0 takes from here on, under
 *     perfect play by both teams. moves == 1: out int8 [R][C] = the same value after the seat to
 *     act plays each legal card, -1 for the other cards. need uint8 [R]: 0 asks for exact values;
 *     else only the questions "value >= t" for the bits t set in need are answered (null-window
 *     searches, much faster): the value returned is a lower bound of the true one that gives the
 *     same answer to every question asked.
 * sample(cards, groups, capacity, voids, out, seed)
 *     Deals the unseen `cards` (uint8, their group = effective suit in `groups`) to three holders
 *     with exact `capacity` (int32 [3]) and the rest to a pool, uniformly at random among deals
 *     in which no holder gets a card of a group it is void in (`voids` int32 [3], bit g). Writes
 *     uint64 [W][4] masks (holders 0..2, pool) to `out`; W = len(out) / 32.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_CARDS 64
#define SEATS 4
#define SUITS 4
#define TT_BITS 15
#define TT_SIZE (1u << TT_BITS)
#define MAX_CAP 7
#define MAX_HAND 8   /* move lists hold 8 cards */
#define MAX_DECK 60  /* the leader sits in the top bits of a transposition key */

typedef struct {
    uint64_t key;
    uint32_t gen;
    int8_t lo, hi;
    int8_t best;
} TTEntry;

typedef struct {
    PyObject_HEAD
    int ncards;
    int8_t esuit[SUITS][MAX_CARDS];
    int16_t strength[SUITS][SUITS][MAX_CARDS];
    int16_t own[SUITS][MAX_CARDS];              /* strength of a card within its own effective suit */
    uint64_t suitmask[SUITS][SUITS];            /* [trump][effective suit] */
    uint64_t above[SUITS][MAX_CARDS];           /* [trump][card]: same-suit cards that beat it */
    TTEntry *tt;
    uint32_t gen;
} SolverObject;

typedef struct {
    SolverObject *so;
    uint64_t hand[SEATS];
    const int8_t *esuit;
    const int16_t (*str)[MAX_CARDS];
    const int16_t *own;
    const uint64_t *smask;
    const uint64_t *above;
    int next[SEATS];
    int nplayers;
    int leader, ncards, led;
    int tcard[SEATS], tseat[SEATS];
} Ctx;

static inline int popcount64(uint64_t x) { return __builtin_popcountll(x); }
static inline int lowbit(uint64_t x) { return __builtin_ctzll(x); }

/* ------------------------------------------------------------------ search */

static inline int to_act(const Ctx *c) {
    return c->ncards == 0 ? c->leader : c->next[c->tseat[c->ncards - 1]];
}

static inline uint64_t legal_cards(const Ctx *c, int seat) {
    uint64_t h = c->hand[seat];
    if (c->ncards == 0) return h;
    uint64_t f = h & c->smask[c->led];
    return f ? f : h;
}

/* Winner seat of the complete trick in c. */
static inline int trick_winner(const Ctx *c) {
    int best = 0, bs = -1;
    for (int k = 0; k < c->ncards; k++) {
        int s = c->str[c->led][c->tcard[k]];
        if (s > bs) { bs = s; best = k; }
    }
    return c->tseat[best];
}

/* Drop cards that are interchangeable with a higher card of the same suit in the same hand:
 * no live card (in any hand or on the current trick) lies between them. */
static uint64_t distinct_moves(const Ctx *c, uint64_t moves, uint64_t live, uint64_t mine) {
    uint64_t out = 0, m = moves;
    while (m) {
        int card = lowbit(m);
        m &= m - 1;
        uint64_t higher = c->above[card] & live;
        if (higher) {
            /* the weakest live card above `card` */
            int nxt = -1, ns = 0x7fff;
            uint64_t h = higher;
            while (h) {
                int x = lowbit(h);
                h &= h - 1;
                if (c->own[x] < ns) { ns = c->own[x]; nxt = x; }
            }
            if ((mine >> nxt) & 1) continue;
        }
        out |= 1ull << card;
    }
    return out;
}

static int order_moves(const Ctx *c, int seat, uint64_t moves, int *list, int best_hint) {
    int n = 0, key[MAX_HAND];
    int winning_str = -1, partner_winning = 0;
    if (c->ncards > 0) {
        int bk = 0;
        for (int k = 0; k < c->ncards; k++) {
            int s = c->str[c->led][c->tcard[k]];
            if (s > winning_str) { winning_str = s; bk = k; }
        }
        partner_winning = (c->tseat[bk] & 1) == (seat & 1);
    }
    while (moves) {
        int card = lowbit(moves);
        moves &= moves - 1;
        int k;
        if (c->ncards == 0) {
            k = -c->own[card];                                         /* lead high */
        } else {
            int s = c->str[c->led][card];
            if (partner_winning || s <= winning_str) k = 1000 + s;   /* throw low */
            else k = s;                                                /* win cheaply */
        }
        if (card == best_hint) k = -100000;
        int i = n++;
        while (i > 0 && key[i - 1] > k) { key[i] = key[i - 1]; list[i] = list[i - 1]; i--; }
        key[i] = k;
        list[i] = card;
    }
    return n;
}

static int last_trick(Ctx *c) {
    /* every active seat still to play holds exactly one card */
    int seat = to_act(c), saved = c->ncards;
    while (c->ncards < c->nplayers) {
        int card = lowbit(c->hand[seat]);
        if (c->ncards == 0) c->led = c->esuit[card];
        c->tcard[c->ncards] = card;
        c->tseat[c->ncards] = seat;
        c->ncards++;
        seat = c->next[seat];
    }
    int w = trick_winner(c);
    c->ncards = saved;
    return (w & 1) == 0;
}

static int search(Ctx *c, int alpha, int beta);

/* Play `card` for `seat`, search on, undo. Returns team 0's tricks from before the card. */
static int play_and_search(Ctx *c, int seat, int card, int alpha, int beta) {
    int saved_led = c->led, saved_leader = c->leader, v;
    c->hand[seat] &= ~(1ull << card);
    if (c->ncards == 0) c->led = c->esuit[card];
    c->tcard[c->ncards] = card;
    c->tseat[c->ncards] = seat;
    c->ncards++;
    if (c->ncards == c->nplayers) {
        int w = trick_winner(c);
        int won = (w & 1) == 0;
        int tc[SEATS], ts[SEATS];
        memcpy(tc, c->tcard, sizeof tc);
        memcpy(ts, c->tseat, sizeof ts);
        c->ncards = 0;
        c->leader = w;
        v = won + search(c, alpha - won, beta - won);
        memcpy(c->tcard, tc, sizeof tc);
        memcpy(c->tseat, ts, sizeof ts);
        c->ncards = c->nplayers;
        c->leader = saved_leader;
    } else {
        v = search(c, alpha, beta);
    }
    c->ncards--;
    c->led = saved_led;
    c->hand[seat] |= 1ull << card;
    return v;
}

static int search(Ctx *c, int alpha, int beta) {
    TTEntry *e = NULL;
    uint64_t key = 0;
    int hint = -1;
    if (c->ncards == 0) {
        uint64_t rem = c->hand[0] | c->hand[1] | c->hand[2] | c->hand[3];
        int left = popcount64(rem) / c->nplayers;
        if (left == 0) return 0;
        if (left == 1) return last_trick(c);
        if (alpha >= left) return left;
        if (beta <= 0) return 0;
        key = rem | ((uint64_t)c->leader << 60);
        uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> (64 - TT_BITS);
        e = &c->so->tt[h];
        if (e->gen == c->so->gen && e->key == key) {
            if (e->lo >= beta) return e->lo;
            if (e->hi <= alpha) return e->hi;
            if (e->lo == e->hi) return e->lo;
            if (e->lo > alpha) alpha = e->lo;
            if (e->hi < beta) beta = e->hi;
            hint = e->best;
        }
    }
    int a1 = alpha, b1 = beta;
    int seat = to_act(c);
    uint64_t live = c->hand[0] | c->hand[1] | c->hand[2] | c->hand[3];
    for (int k = 0; k < c->ncards; k++) live |= 1ull << c->tcard[k];
    uint64_t moves = distinct_moves(c, legal_cards(c, seat), live, c->hand[seat]);
    int list[MAX_HAND];
    int n = order_moves(c, seat, moves, list, hint);
    int maximize = (seat & 1) == 0;
    int best = maximize ? -1 : 100, best_card = list[0];
    for (int i = 0; i < n; i++) {
        int v = play_and_search(c, seat, list[i], alpha, beta);
        if (maximize) {
            if (v > best) { best = v; best_card = list[i]; }
            if (best > alpha) alpha = best;
        } else {
            if (v < best) { best = v; best_card = list[i]; }
            if (best < beta) beta = best;
        }
        if (alpha >= beta) break;
    }
    if (e) {
        int lo = 0, hi = 10;
        if (e->gen == c->so->gen && e->key == key) { lo = e->lo; hi = e->hi; }
        else { uint64_t rem = key & ~(0xFull << 60); hi = popcount64(rem) / c->nplayers; }
        if (best <= a1) { if (best < hi) hi = best; }
        else if (best >= b1) { if (best > lo) lo = best; }
        else { lo = hi = best; }
        e->key = key;
        e->gen = c->so->gen;
        e->lo = (int8_t)lo;
        e->hi = (int8_t)hi;
        e->best = (int8_t)best_card;
    }
    return best;
}

/* The value of the position after `card` (card < 0: the position itself), exact when need == 0,
 * else resolved only against the thresholds in need (see solve). */
static int resolve(Ctx *c, int seat, int card, int left, int need) {
    if (!need) return card < 0 ? search(c, -1, left + 1) : play_and_search(c, seat, card, -1, left + 1);
    int lo = 0, hi = left;   /* the value lies in [lo, hi] */
    for (;;) {
        int ts[8], n = 0;
        for (int t = lo + 1; t <= hi; t++) if ((need >> t) & 1) ts[n++] = t;
        if (n == 0) return lo;
        int t = ts[n / 2];
        int v = card < 0 ? search(c, t - 1, t) : play_and_search(c, seat, card, t - 1, t);
        if (v >= t) lo = v;   /* fail-soft: v is a lower bound */
        else hi = v;          /* ... or an upper bound */
    }
}

/* ------------------------------------------------------------------ Solver type */

static void next_gen(SolverObject *so) {
    so->gen++;
    if (so->gen == 0) {
        memset(so->tt, 0, sizeof(TTEntry) * TT_SIZE);
        so->gen = 1;
    }
}

static int Solver_init(SolverObject *self, PyObject *args, PyObject *kwds) {
    Py_buffer es, ts;
    int ncards;
    if (!PyArg_ParseTuple(args, "y*y*i", &es, &ts, &ncards)) return -1;
    int ok = ncards > 0 && ncards <= MAX_DECK && es.len == SUITS * ncards &&
             ts.len == (Py_ssize_t)(SUITS * SUITS * ncards * sizeof(int16_t));
    if (!ok) {
        PyBuffer_Release(&es);
        PyBuffer_Release(&ts);
        PyErr_SetString(PyExc_ValueError, "Solver: tables do not match num_cards <= 60 (need int8 [4][C], int16 [4][4][C])");
        return -1;
    }
    self->ncards = ncards;
    const int8_t *e = (const int8_t *)es.buf;
    const int16_t *t = (const int16_t *)ts.buf;
    memset(self->suitmask, 0, sizeof self->suitmask);
    memset(self->above, 0, sizeof self->above);
    for (int tr = 0; tr < SUITS; tr++)
        for (int card = 0; card < ncards; card++) {
            int s = e[tr * ncards + card];
            self->esuit[tr][card] = (int8_t)s;
            self->suitmask[tr][s] |= 1ull << card;
            for (int led = 0; led < SUITS; led++)
                self->strength[tr][led][card] = t[(tr * SUITS + led) * ncards + card];
            self->own[tr][card] = t[(tr * SUITS + s) * ncards + card];
        }
    for (int tr = 0; tr < SUITS; tr++)
        for (int card = 0; card < ncards; card++)
            for (int other = 0; other < ncards; other++)
                if (self->esuit[tr][other] == self->esuit[tr][card] && self->own[tr][other] > self->own[tr][card])
                    self->above[tr][card] |= 1ull << other;
    PyBuffer_Release(&es);
    PyBuffer_Release(&ts);
    if (!self->tt) {
        self->tt = (TTEntry *)PyMem_Calloc(TT_SIZE, sizeof(TTEntry));
        if (!self->tt) { PyErr_NoMemory(); return -1; }
    }
    self->gen = 1;
    return 0;
}

static void Solver_dealloc(SolverObject *self) {
    PyMem_Free(self->tt);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Set up ctx for one position; returns 0 or -1 with a message in err. */
static int setup(SolverObject *so, Ctx *c, const uint64_t *hands, int trump, int leader, int active,
                 const int16_t *trick, const char **err) {
    if (trump < 0 || trump >= SUITS) { *err = "trump must be 0..3"; return -1; }
    if (leader < 0 || leader >= SEATS || !((active >> leader) & 1)) { *err = "leader must be an active seat"; return -1; }
    c->so = so;
    c->esuit = so->esuit[trump];
    c->str = (const int16_t (*)[MAX_CARDS])so->strength[trump];
    c->own = so->own[trump];
    c->smask = so->suitmask[trump];
    c->above = so->above[trump];
    c->nplayers = 0;
    uint64_t all = so->ncards >= 64 ? ~0ull : ((1ull << so->ncards) - 1), seen = 0;
    for (int s = 0; s < SEATS; s++) {
        if ((active >> s) & 1) {
            c->nplayers++;
            c->hand[s] = hands[s];
            if (hands[s] & ~all) { *err = "a hand holds a card id outside the deck"; return -1; }
            if (hands[s] & seen) { *err = "a card is in two hands"; return -1; }
            seen |= hands[s];
        } else {
            c->hand[s] = 0;
        }
    }
    if (c->nplayers < 2) { *err = "at least two seats must be active"; return -1; }
    for (int s = 0; s < SEATS; s++) {
        int n = (s + 1) % SEATS;
        while (!((active >> n) & 1)) n = (n + 1) % SEATS;
        c->next[s] = n;
    }
    c->leader = leader;
    c->ncards = 0;
    c->led = 0;
    int on_trick = 0;
    for (int s = 0; s < SEATS; s++) if (trick[s] >= 0) on_trick++;
    int seat = leader;
    while (c->ncards < c->nplayers && trick[seat] >= 0) {
        int card = trick[seat];
        if (card >= so->ncards || ((seen >> card) & 1)) { *err = "a trick card is outside the deck or also in a hand"; return -1; }
        seen |= 1ull << card;
        if (c->ncards == 0) c->led = c->esuit[card];
        c->tcard[c->ncards] = card;
        c->tseat[c->ncards] = seat;
        c->ncards++;
        seat = c->next[seat];
    }
    if (c->ncards != on_trick || c->ncards == c->nplayers) { *err = "trick cards must be played by the leader and the active seats after it, and the trick must be incomplete"; return -1; }
    int size = -1;
    /* seats that have played to this trick hold one card fewer than the rest */
    seat = leader;
    for (int k = 0; k < c->nplayers; k++) {
        int n = popcount64(c->hand[seat]) + (k < c->ncards ? 1 : 0);
        if (size < 0) size = n;
        if (n != size) { *err = "active hands have inconsistent sizes for the trick in progress"; return -1; }
        seat = c->next[seat];
    }
    if (size == 0 && c->ncards > 0) { *err = "no cards left to finish the trick"; return -1; }
    if (size > MAX_HAND) { *err = "hands of more than 8 cards are not supported"; return -1; }
    return 0;
}

static PyObject *Solver_solve(SolverObject *self, PyObject *args) {
    Py_buffer hb, tb, lb, ab, kb, nb, ob;
    int moves;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*w*p", &hb, &tb, &lb, &ab, &kb, &nb, &ob, &moves)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t R = tb.len;
    int C = self->ncards;
    const char *err = NULL;
    if (hb.len != R * SEATS * 8 || lb.len != R || ab.len != R || kb.len != R * SEATS * 2 || nb.len != R ||
        ob.len != (moves ? R * C : R)) {
        PyErr_SetString(PyExc_ValueError, "solve: buffer sizes do not agree (hands u64 [R][4], trump/leader/active [R], trick i16 [R][4], out i8)");
        goto done;
    }
    const uint64_t *hands = (const uint64_t *)hb.buf;
    const int8_t *trump = (const int8_t *)tb.buf, *leader = (const int8_t *)lb.buf;
    const uint8_t *active = (const uint8_t *)ab.buf, *need = (const uint8_t *)nb.buf;
    const int16_t *trick = (const int16_t *)kb.buf;
    int8_t *out = (int8_t *)ob.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < R && !err; r++) {
        Ctx c;
        if (setup(self, &c, hands + r * SEATS, trump[r], leader[r], active[r], trick + r * SEATS, &err) < 0) break;
        next_gen(self);
        if (!moves) {
            uint64_t rem = c.hand[0] | c.hand[1] | c.hand[2] | c.hand[3];
            int left = (popcount64(rem) + c.ncards) / c.nplayers;
            out[r] = (int8_t)resolve(&c, 0, -1, left, need[r]);
            continue;
        }
        int8_t *row = out + r * C;
        memset(row, -1, C);
        int seat = to_act(&c);
        uint64_t legal = legal_cards(&c, seat);
        if (!legal) { err = "the seat to act holds no card"; break; }
        uint64_t live = c.hand[0] | c.hand[1] | c.hand[2] | c.hand[3];
        for (int k = 0; k < c.ncards; k++) live |= 1ull << c.tcard[k];
        int left = (popcount64(live)) / c.nplayers;
        uint64_t distinct = distinct_moves(&c, legal, live, c.hand[seat]);
        int list[MAX_HAND];
        int n = order_moves(&c, seat, distinct, list, -1);
        for (int i = 0; i < n; i++)
            row[list[i]] = (int8_t)resolve(&c, seat, list[i], left, need[r]);
        /* an interchangeable card takes the value of the next live card above it in its hand */
        uint64_t rest = legal & ~distinct;
        while (rest) {
            int card = lowbit(rest);
            rest &= rest - 1;
            int x = card;
            while (!((distinct >> x) & 1)) {
                uint64_t higher = c.above[x] & live;
                int nxt = -1, ns = 0x7fff;
                while (higher) {
                    int y = lowbit(higher);
                    higher &= higher - 1;
                    if (c.own[y] < ns) { ns = c.own[y]; nxt = y; }
                }
                x = nxt;
            }
            row[card] = row[x];
        }
    }
    Py_END_ALLOW_THREADS
    if (err) { PyErr_SetString(PyExc_ValueError, err); goto done; }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&hb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&ab);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&ob);
    return result;
}

static PyMethodDef Solver_methods[] = {
    {"solve", (PyCFunction)Solver_solve, METH_VARARGS,
     "solve(hands, trump, leader, active, trick, need, out, moves): double-dummy values into out."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SolverType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "agents._dds.Solver",
    .tp_basicsize = sizeof(SolverObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Double-dummy Euchre solver over the engine's card tables.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Solver_init,
    .tp_dealloc = (destructor)Solver_dealloc,
    .tp_methods = Solver_methods,
};

/* ------------------------------------------------------------------ sampler */

typedef struct { uint64_t s; } Rng;

static inline uint64_t rng_next(Rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline double rng_unit(Rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

static inline int rng_below(Rng *r, int n) { return (int)(rng_unit(r) * n); }

#define CAPDIM (MAX_CAP + 1)

static PyObject *sample(PyObject *module, PyObject *args) {
    Py_buffer cb, gb, capb, vb, ob;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*K", &cb, &gb, &capb, &vb, &ob, &seed)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = cb.len;
    if (gb.len != n || capb.len != 3 * 4 || vb.len != 3 * 4 || ob.len % 32 != 0 || n > MAX_CARDS) {
        PyErr_SetString(PyExc_ValueError, "sample: need cards/groups uint8 [n], capacity/voids int32 [3], out uint64 [W][4]");
        goto done;
    }
    const uint8_t *cards = (const uint8_t *)cb.buf, *groups = (const uint8_t *)gb.buf;
    const int32_t *cap = (const int32_t *)capb.buf, *voids = (const int32_t *)vb.buf;
    uint64_t *out = (uint64_t *)ob.buf;
    Py_ssize_t W = ob.len / 32;
    int members[SUITS][MAX_CARDS], k[SUITS] = {0, 0, 0, 0}, K[SUITS + 1];
    for (Py_ssize_t i = 0; i < n; i++) {
        if (groups[i] >= SUITS || cards[i] >= MAX_CARDS) {
            PyErr_SetString(PyExc_ValueError, "sample: group ids must be 0..3 and card ids below 64");
            goto done;
        }
        members[groups[i]][k[groups[i]]++] = cards[i];
    }
    for (int h = 0; h < 3; h++)
        if (cap[h] < 0 || cap[h] > MAX_CAP) {
            PyErr_SetString(PyExc_ValueError, "sample: capacities must be 0..7");
            goto done;
        }
    K[SUITS] = 0;
    for (int g = SUITS - 1; g >= 0; g--) K[g] = K[g + 1] + k[g];
    double fact[MAX_CARDS + 1];
    fact[0] = 1.0;
    for (int i = 1; i <= MAX_CARDS; i++) fact[i] = fact[i - 1] * i;
    /* ways[g][a][b][c]: deals of groups g.. that fill exactly a, b, c cards into holders 0..2 */
    static double ways[SUITS + 1][CAPDIM][CAPDIM][CAPDIM];
    memset(ways, 0, sizeof ways);
    ways[SUITS][0][0][0] = 1.0;
    for (int g = SUITS - 1; g >= 0; g--) {
        int kg = k[g];
        int m0 = (voids[0] >> g) & 1 ? 0 : kg, m1 = (voids[1] >> g) & 1 ? 0 : kg, m2 = (voids[2] >> g) & 1 ? 0 : kg;
        for (int a = 0; a <= cap[0]; a++)
            for (int b = 0; b <= cap[1]; b++)
                for (int c = 0; c <= cap[2]; c++) {
                    int pool = K[g] - a - b - c;
                    if (pool < 0) continue;
                    double total = 0.0;
                    for (int x0 = 0; x0 <= (m0 < a ? m0 : a); x0++)
                        for (int x1 = 0; x1 <= (m1 < b ? m1 : b) && x0 + x1 <= kg; x1++)
                            for (int x2 = 0; x2 <= (m2 < c ? m2 : c) && x0 + x1 + x2 <= kg; x2++) {
                                double w = ways[g + 1][a - x0][b - x1][c - x2];
                                if (w == 0.0) continue;
                                total += w * fact[kg] / (fact[x0] * fact[x1] * fact[x2] * fact[kg - x0 - x1 - x2]);
                            }
                    ways[g][a][b][c] = total;
                }
    }
    if (K[0] < cap[0] + cap[1] + cap[2] || ways[0][cap[0]][cap[1]][cap[2]] <= 0.0) {
        PyErr_SetString(PyExc_ValueError, "sample: no deal of the unseen cards fits the capacities and voids");
        goto done;
    }
    Rng rng = {seed};
    for (Py_ssize_t w = 0; w < W; w++) {
        uint64_t mask[4] = {0, 0, 0, 0};
        int a = cap[0], b = cap[1], c = cap[2];
        for (int g = 0; g < SUITS; g++) {
            int kg = k[g];
            int m0 = (voids[0] >> g) & 1 ? 0 : kg, m1 = (voids[1] >> g) & 1 ? 0 : kg, m2 = (voids[2] >> g) & 1 ? 0 : kg;
            double target = rng_unit(&rng) * ways[g][a][b][c], acc = 0.0;
            int c0 = -1, c1 = -1, c2 = -1, last0 = -1, last1 = -1, last2 = -1;
            for (int x0 = 0; x0 <= (m0 < a ? m0 : a) && c0 < 0; x0++)
                for (int x1 = 0; x1 <= (m1 < b ? m1 : b) && x0 + x1 <= kg && c0 < 0; x1++)
                    for (int x2 = 0; x2 <= (m2 < c ? m2 : c) && x0 + x1 + x2 <= kg; x2++) {
                        double wt = ways[g + 1][a - x0][b - x1][c - x2];
                        if (wt == 0.0) continue;
                        acc += wt * fact[kg] / (fact[x0] * fact[x1] * fact[x2] * fact[kg - x0 - x1 - x2]);
                        last0 = x0; last1 = x1; last2 = x2;
                        if (acc > target) { c0 = x0; c1 = x1; c2 = x2; break; }
                    }
            if (c0 < 0) { c0 = last0; c1 = last1; c2 = last2; }   /* rounding at the very top */
            int perm[MAX_CARDS];
            for (int i = 0; i < kg; i++) perm[i] = members[g][i];
            for (int i = kg - 1; i > 0; i--) {
                int j = rng_below(&rng, i + 1);
                int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
            }
            int i = 0;
            for (; i < c0; i++) mask[0] |= 1ull << perm[i];
            for (; i < c0 + c1; i++) mask[1] |= 1ull << perm[i];
            for (; i < c0 + c1 + c2; i++) mask[2] |= 1ull << perm[i];
            for (; i < kg; i++) mask[3] |= 1ull << perm[i];
            a -= c0; b -= c1; c -= c2;
        }
        memcpy(out + w * 4, mask, sizeof mask);
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&cb);
    PyBuffer_Release(&gb);
    PyBuffer_Release(&capb);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&ob);
    return result;
}

static PyMethodDef module_methods[] = {
    {"sample", sample, METH_VARARGS,
     "sample(cards, groups, capacity, voids, out, seed): uniform deals of unseen cards respecting voids."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "agents._dds", "Double-dummy search and layout sampling for Euchre.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__dds(void) {
    if (PyType_Ready(&SolverType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    Py_INCREF(&SolverType);
    if (PyModule_AddObject(m, "Solver", (PyObject *)&SolverType) < 0) {
        Py_DECREF(&SolverType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
