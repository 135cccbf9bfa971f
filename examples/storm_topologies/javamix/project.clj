(defproject javamix "0.0.1-SNAPSHOT"
  :resource-paths ["_resources"]
  :target-path "_build"
  :java-source-paths ["src/jvm"]
  :min-lein-version "2.0.0"
  :jvm-opts ["-client"]
  ; Storm 2.8.3, the newest whose modules Maven Central serves; "provided": the
  ; cluster's Storm (or heronbridge) runs the topology, the jar carries the Java
  ; components and src/.
  :dependencies  [[org.apache.storm/storm-client "2.8.3" :scope "provided"]]
  :javac-options ["--release" "17"]
  :jar-exclusions     [#"log4j\.properties" #"META-INF" #"meta-inf" #"\.yaml"]
  :uberjar-exclusions [#"log4j\.properties" #"META-INF" #"meta-inf" #"\.yaml"]
  )
