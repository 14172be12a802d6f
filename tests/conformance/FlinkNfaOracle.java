/*
 * Flink CEP's own NFA as an oracle for random sequence patterns (see flinkdiff.py next to it).
 *
 * Reads cases from stdin in a line format written by flinkdiff.py, runs each through
 * NFACompiler + NFA + SharedBuffer the way Flink's NFA test harness does (for each event:
 * advanceTime(t), then process(event, t); at the end advanceTime(final)), with timeout handling on,
 * and prints, per case, its matches and timed-out partial matches in emission order.
 *
 * Input (tab-separated fields):
 *   case   ID  SKIP  SKIP_TARGET  WITHIN_MS(-1 = none)  FINAL(-1 = none)  THROW_ON_MISS(0/1)
 *   stage  NAME  CONTIGUITY  MIN  MAX(-1 = unbounded)  OPTIONAL  GREEDY  INNER  WHERE  UNTIL
 *          QUANTIFIER_WINDOW_MS(-1)  WITHIN_PREVIOUS_MS(-1)
 *   event  T  NAME  PRICE
 *   end
 * CONTIGUITY: begin | next | followedBy | followedByAny | notNext | notFollowedBy
 * INNER: relaxed | strict | any.  WHERE / UNTIL: "-" (none), or clauses joined by "|" (OR), each
 * "NAME" or "NAME,OP,VALUE" (OP one of < <= > >=, on price), "*" = any event, or
 * "NAME,sum,STAGE,INCLUDE,OP,VALUE": the sum of the prices of STAGE's events so far (plus this
 * event's when INCLUDE is 1) compared with VALUE (an iterative condition).
 * Output:
 *   case ID
 *   match T_EMIT  stage=i,j;stage=k      (event indexes, stage order as Flink lists them)
 *   timeout T     stage=i;...
 *   error MESSAGE      (Flink refuses the pattern, or the run fails on purpose)
 *   crash MESSAGE      (a NullPointerException inside Flink, or over 2 s: no expectation)
 *   end
 */

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.KeyedStateStore;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.cep.nfa.NFA;
import org.apache.flink.cep.nfa.NFAState;
import org.apache.flink.cep.nfa.aftermatch.AfterMatchSkipStrategy;
import org.apache.flink.cep.nfa.compiler.NFACompiler;
import org.apache.flink.cep.nfa.sharedbuffer.SharedBuffer;
import org.apache.flink.cep.nfa.sharedbuffer.SharedBufferAccessor;
import org.apache.flink.cep.pattern.Pattern;
import org.apache.flink.cep.pattern.WithinType;
import org.apache.flink.cep.pattern.conditions.IterativeCondition;
import org.apache.flink.cep.time.TimerService;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

public class FlinkNfaOracle {

    /** The most time one case may take (a run past it has no expectation). */
    static final long BUDGET_NS = 2_000_000_000L;

    /** The test event: its index in the case, name and price (Flink's NFA tests' Event). */
    public static class Event {
        public int index;
        public String name;
        public double price;

        public Event() {}

        @Override
        public String toString() {
            return index + ":" + name;
        }
    }

    static final class StageSpec {
        String name, contiguity, inner, where, until;
        int min, max;
        long window, withinPrev;
        boolean optional, greedy;
    }

    /** Clauses OR-ed; a clause is a name test and an optional price comparison (see the header). */
    static final class Clauses extends IterativeCondition<Event> {
        final String[] clauses;

        Clauses(String text) {
            this.clauses = text.split("\\|");
        }

        @Override
        public boolean filter(Event e, Context<Event> ctx) throws Exception {
            for (String c : clauses) {
                if (c.equals("*")) {
                    return true;
                }
                String[] p = c.split(",");
                if (!e.name.equals(p[0])) {
                    continue;
                }
                if (p.length == 1) {
                    return true;
                }
                double value = e.price;
                String op = p[1];
                double v;
                if (p[1].equals("sum")) {  // NAME,sum,STAGE,INCLUDE(0/1),OP,V
                    double sum = p[3].equals("1") ? e.price : 0.0;
                    for (Event x : ctx.getEventsForPattern(p[2])) {
                        sum += x.price;
                    }
                    value = sum;
                    op = p[4];
                    v = Double.parseDouble(p[5]);
                } else {
                    v = Double.parseDouble(p[2]);
                }
                if (compare(value, op, v)) {
                    return true;
                }
            }
            return false;
        }
    }

    static boolean compare(double a, String op, double b) {
        switch (op) {
            case "<": return a < b;
            case "<=": return a <= b;
            case ">": return a > b;
            case ">=": return a >= b;
            default: throw new IllegalArgumentException("operator " + op);
        }
    }

    static AfterMatchSkipStrategy skip(String kind, String target, boolean throwOnMiss) {
        if (kind.equals("skip_to_first") && throwOnMiss) {
            return AfterMatchSkipStrategy.skipToFirst(target).throwExceptionOnMiss();
        }
        if (kind.equals("skip_to_last") && throwOnMiss) {
            return AfterMatchSkipStrategy.skipToLast(target).throwExceptionOnMiss();
        }
        switch (kind) {
            case "no_skip": return AfterMatchSkipStrategy.noSkip();
            case "skip_to_next": return AfterMatchSkipStrategy.skipToNext();
            case "skip_past_last_event": return AfterMatchSkipStrategy.skipPastLastEvent();
            case "skip_to_first": return AfterMatchSkipStrategy.skipToFirst(target);
            case "skip_to_last": return AfterMatchSkipStrategy.skipToLast(target);
            default: throw new IllegalArgumentException("skip " + kind);
        }
    }

    static Pattern<Event, Event> build(List<StageSpec> stages, AfterMatchSkipStrategy skip, long within) {
        Pattern<Event, Event> p = null;
        for (StageSpec s : stages) {
            switch (s.contiguity) {
                case "begin": p = Pattern.<Event>begin(s.name, skip); break;
                case "next": p = p.next(s.name); break;
                case "followedBy": p = p.followedBy(s.name); break;
                case "followedByAny": p = p.followedByAny(s.name); break;
                case "notNext": p = p.notNext(s.name); break;
                case "notFollowedBy": p = p.notFollowedBy(s.name); break;
                default: throw new IllegalArgumentException("contiguity " + s.contiguity);
            }
            if (!s.where.equals("-")) {
                p = p.where(new Clauses(s.where));
            }
            Duration w = s.window >= 0 ? Duration.ofMillis(s.window) : null;
            if (s.max == -1) {
                p = s.min == 1 ? p.oneOrMore(w) : p.timesOrMore(s.min, w);
            } else if (s.min != 1 || s.max != 1) {
                p = s.min == s.max ? p.times(s.min, w) : p.times(s.min, s.max, w);
            }
            if (s.max == -1 || s.max > 1) {
                if (s.inner.equals("strict")) {
                    p = p.consecutive();
                } else if (s.inner.equals("any")) {
                    p = p.allowCombinations();
                }
            }
            if (s.optional) {
                p = p.optional();
            }
            if (s.greedy) {
                p = p.greedy();
            }
            if (!s.until.equals("-")) {
                p = p.until(new Clauses(s.until));
            }
            if (s.withinPrev >= 0) {
                p = p.within(Duration.ofMillis(s.withinPrev), WithinType.PREVIOUS_AND_CURRENT);
            }
        }
        if (within >= 0) {
            p = p.within(Duration.ofMillis(within));
        }
        return p;
    }

    static String describe(Map<String, List<Event>> m) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, List<Event>> en : m.entrySet()) {
            if (sb.length() > 0) sb.append(';');
            sb.append(en.getKey()).append('=');
            for (int i = 0; i < en.getValue().size(); i++) {
                if (i > 0) sb.append(',');
                sb.append(en.getValue().get(i).index);
            }
        }
        return sb.toString();
    }

    static void run(String id, List<StageSpec> stages, String skipKind, String target, boolean throwOnMiss, long within, long fin,
                    List<long[]> times, List<Event> events, StringBuilder out) throws Exception {
        int mark = out.length();
        out.append("case ").append(id).append('\n');
        AfterMatchSkipStrategy skip;
        NFA<Event> nfa;
        try {
            skip = skip(skipKind, target, throwOnMiss);
            nfa = NFACompiler.compileFactory(build(stages, skip, within), true).createNFA();
        } catch (Exception e) {  // the pattern is refused (it must be refused on the other side too),
            // unless Flink's compiler itself failed on it (a NullPointerException): then no oracle
            failure(e, out);
            out.append("end\n");
            return;
        }
        try {
            TypeSerializer<Event> ser = TypeInformation.of(Event.class).createSerializer(new SerializerConfigImpl());
            Store store = new Store();
            SharedBuffer<Event> buffer = new SharedBuffer<>(store, ser);
            TimerService timer = () -> 0L;
            NFAState state = nfa.createInitialNFAState();
            long deadline = System.nanoTime() + BUDGET_NS;
            for (int i = 0; i < events.size(); i++) {
                if (System.nanoTime() > deadline) {  // an exponential case (combinations, no window)
                    out.setLength(mark);
                    out.append("case ").append(id).append('\n');
                    out.append("crash over budget after ").append(i).append(" events\n").append("end\n");
                    buffer.releaseCacheStatisticsTimer();
                    return;
                }
                long t = times.get(i)[0];
                try (SharedBufferAccessor<Event> acc = buffer.getAccessor()) {
                    emit(nfa.advanceTime(acc, state, t, skip), t, out);
                    for (Map<String, List<Event>> m : nfa.process(acc, state, events.get(i), t, skip, timer)) {
                        out.append("match ").append(t).append('\t').append(describe(m)).append('\n');
                    }
                }
            }
            if (fin >= 0) {
                try (SharedBufferAccessor<Event> acc = buffer.getAccessor()) {
                    emit(nfa.advanceTime(acc, state, fin, skip), fin, out);
                }
            }
            buffer.releaseCacheStatisticsTimer();
        } catch (Exception e) {  // the run fails (a skip with throwExceptionOnMiss that misses) --
            // it must fail on the other side too -- unless Flink itself failed (a NullPointerException)
            failure(e, out);
        }
        out.append("end\n");
    }

    /** An "error" line (the other side must fail too), or a "crash" line for Flink's own
     *  NullPointerException (no oracle). Flink wraps an exception thrown while a condition is
     *  evaluated in a FlinkRuntimeException ("Failure happened in filter function"), its own
     *  NullPointerException included, so the root cause decides. */
    static void failure(Exception e, StringBuilder out) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        out.append(root instanceof NullPointerException ? "crash " : "error ").append(e.getClass().getSimpleName()).append(": ")
           .append(String.valueOf(e.getMessage()).replace('\n', ' ')).append('\n');
    }

    static void emit(Tuple2<Collection<Map<String, List<Event>>>, Collection<Tuple2<Map<String, List<Event>>, Long>>> r,
                     long t, StringBuilder out) {
        for (Map<String, List<Event>> m : r.f0) {
            out.append("match ").append(t).append('\t').append(describe(m)).append('\n');
        }
        for (Tuple2<Map<String, List<Event>>, Long> to : r.f1) {
            out.append("timeout ").append(to.f1).append('\t').append(describe(to.f0)).append('\n');
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder out = new StringBuilder();
        String line;
        String id = null, skipKind = null, target = null;
        boolean throwOnMiss = false;
        long within = -1, fin = -1;
        List<StageSpec> stages = new ArrayList<>();
        List<Event> events = new ArrayList<>();
        List<long[]> times = new ArrayList<>();
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "case":
                    id = f[1]; skipKind = f[2]; target = f[3];
                    within = Long.parseLong(f[4]); fin = Long.parseLong(f[5]);
                    throwOnMiss = f[6].equals("1");
                    stages = new ArrayList<>(); events = new ArrayList<>(); times = new ArrayList<>();
                    break;
                case "stage": {
                    StageSpec s = new StageSpec();
                    s.name = f[1]; s.contiguity = f[2];
                    s.min = Integer.parseInt(f[3]); s.max = Integer.parseInt(f[4]);
                    s.optional = f[5].equals("1"); s.greedy = f[6].equals("1");
                    s.inner = f[7]; s.where = f[8]; s.until = f[9];
                    s.window = Long.parseLong(f[10]); s.withinPrev = Long.parseLong(f[11]);
                    stages.add(s);
                    break;
                }
                case "event": {
                    Event e = new Event();
                    e.index = events.size(); e.name = f[2]; e.price = Double.parseDouble(f[3]);
                    events.add(e);
                    times.add(new long[] {Long.parseLong(f[1])});
                    break;
                }
                case "end":
                    run(id, stages, skipKind, target, throwOnMiss, within, fin, times, events, out);
                    break;
                default:
                    throw new IllegalArgumentException("line " + line);
            }
        }
        System.out.print(out);
        System.out.flush();
        System.exit(0);  // why: a buffer left by a failed case may hold its statistics timer thread
    }

    /** A keyed state store with one key (SharedBuffer only needs MapStates). */
    static final class Store implements KeyedStateStore {
        @Override
        public <UK, UV> MapState<UK, UV> getMapState(MapStateDescriptor<UK, UV> d) {
            return new Map1<>();
        }

        static final class Map1<UK, UV> implements MapState<UK, UV> {
            final HashMap<UK, UV> m = new HashMap<>();
            public UV get(UK k) { return m.get(k); }
            public void put(UK k, UV v) { m.put(k, v); }
            public void putAll(Map<UK, UV> map) { m.putAll(map); }
            public void remove(UK k) { m.remove(k); }
            public boolean contains(UK k) { return m.containsKey(k); }
            public Iterable<Map.Entry<UK, UV>> entries() { return m.entrySet(); }
            public Iterable<UK> keys() { return m.keySet(); }
            public Iterable<UV> values() { return m.values(); }
            public Iterator<Map.Entry<UK, UV>> iterator() { return m.entrySet().iterator(); }
            public boolean isEmpty() { return m.isEmpty(); }
            public void clear() { m.clear(); }
        }

        private static UnsupportedOperationException uoe() {
            return new UnsupportedOperationException("not needed by SharedBuffer");
        }

        public <T> ValueState<T> getState(ValueStateDescriptor<T> d) { throw uoe(); }
        public <T> ListState<T> getListState(ListStateDescriptor<T> d) { throw uoe(); }
        public <T> ReducingState<T> getReducingState(ReducingStateDescriptor<T> d) { throw uoe(); }
        public <IN, ACC, OUT> AggregatingState<IN, OUT> getAggregatingState(AggregatingStateDescriptor<IN, ACC, OUT> d) {
            throw uoe();
        }
        public <T> org.apache.flink.api.common.state.v2.ValueState<T> getValueState(
                org.apache.flink.api.common.state.v2.ValueStateDescriptor<T> d) { throw uoe(); }
        public <T> org.apache.flink.api.common.state.v2.ListState<T> getListState(
                org.apache.flink.api.common.state.v2.ListStateDescriptor<T> d) { throw uoe(); }
        public <UK, UV> org.apache.flink.api.common.state.v2.MapState<UK, UV> getMapState(
                org.apache.flink.api.common.state.v2.MapStateDescriptor<UK, UV> d) { throw uoe(); }
        public <T> org.apache.flink.api.common.state.v2.ReducingState<T> getReducingState(
                org.apache.flink.api.common.state.v2.ReducingStateDescriptor<T> d) { throw uoe(); }
        public <IN, ACC, OUT> org.apache.flink.api.common.state.v2.AggregatingState<IN, OUT> getAggregatingState(
                org.apache.flink.api.common.state.v2.AggregatingStateDescriptor<IN, ACC, OUT> d) { throw uoe(); }
        public String getBackendTypeIdentifier() { return "flinkdiff-one-key"; }
    }
}
