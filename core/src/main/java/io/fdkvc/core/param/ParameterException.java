package io.fdkvc.core.param;

import io.fdkvc.core.InputException;

/** A parameter value that is missing, mistyped or out of range; names the parameter. */
public final class ParameterException extends InputException {
    private final String parameter;
    private final String problem;

    /**
     * @param parameter the parameter's name in the library (a record component, a field), never a
     *                  command-line flag: the command line maps it to its own option
     * @param problem   what is wrong with it
     */
    public ParameterException(String parameter, String problem) {
        super(parameter + ": " + problem);
        this.parameter = parameter;
        this.problem = problem;
    }

    public String parameter() {
        return parameter;
    }

    /** The message without the parameter's name. */
    public String problem() {
        return problem;
    }
}
