package io.fdkvc.engine.template;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.AdvancedFilter;
import com.hubspot.jinjava.lib.filter.Filter;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * What Jinja's {@code map}, {@code select}, {@code reject}, {@code selectattr} and
 * {@code rejectattr} filters return: a Python generator, not a list. Loops, {@code join},
 * {@code list}, {@code first} read it like a list, so it is held as one (Jinjava's filters take
 * it as such); what Python refuses on a generator is refused here too: {@code json.dumps}
 * ({@link PythonJson}) raises "Object of type generator is not JSON serializable", so
 * {@code tools|map(attribute='function')|tojson} fails in Jinja unless {@code |list} comes between.
 */
final class PythonGenerator extends ArrayList<Object> {
    /** The filters whose results are generators in Jinja. */
    static final List<String> FILTERS = List.of("map", "select", "reject", "selectattr", "rejectattr");

    private PythonGenerator(Collection<?> items) {
        super(items);
    }

    /** Jinjava's filter {@code delegate} with its (collection) result as a generator. */
    static Filter returningGenerator(Filter delegate) {
        return new AdvancedFilter() {
            @Override
            public String getName() {
                return delegate.getName();
            }

            @Override
            public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
                Object result = delegate.filter(var, interpreter, args, kwargs);
                return result instanceof Collection<?> items ? new PythonGenerator(items) : result;
            }
        };
    }
}
