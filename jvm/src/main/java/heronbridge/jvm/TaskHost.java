package heronbridge.jvm;

public final class TaskHost {
    public static void main(String[] args) {
        System.out.println(heronbridge.runtime.Control.RegisterInstanceRequest.newBuilder().setTaskId(3).build());
    }
}
