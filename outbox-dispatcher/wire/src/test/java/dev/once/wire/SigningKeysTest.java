package dev.once.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a key ring accepts, and that it never shows a secret. */
class SigningKeysTest {

    static final String SECRET = "s3cr3t-".repeat(6);

    @Test
    void a_single_key_is_current_and_several_need_the_current_one_named() {
        assertThat(SigningKeys.of(Map.of("k1", SECRET), null).current()).isEqualTo("k1");

        Map<String, String> two = new LinkedHashMap<>();
        two.put("k1", SECRET);
        two.put("k2", SECRET + "2");
        assertThatThrownBy(() -> SigningKeys.of(two, null)).hasMessageContaining("name the one that signs");
        assertThatThrownBy(() -> SigningKeys.of(two, "k3")).hasMessageContaining("'k3' is not in the key ring [k1, k2]");
        assertThat(SigningKeys.of(two, "k2").ids()).containsExactly("k1", "k2");
    }

    @Test
    void a_short_secret_or_a_malformed_id_is_refused_naming_the_key_and_never_the_secret() {
        assertThatThrownBy(() -> SigningKeys.of(Map.of("short", "tooshort"), null))
                .hasMessageContaining("'short' has 8 bytes").hasMessageContaining("at least 32")
                .hasMessageNotContaining("tooshort");
        assertThatThrownBy(() -> SigningKeys.of(Map.of("no spaces", SECRET), null)).hasMessageContaining("'no spaces'");
        assertThatThrownBy(() -> SigningKeys.of(Map.of(), null)).hasMessageContaining("empty");
    }

    @Test
    void to_string_and_describe_name_key_ids_only() {
        SigningKeys keys = SigningKeys.of(Map.of("k1", SECRET), null);

        assertThat(keys.toString()).isEqualTo("SigningKeys[current=k1, ids=[k1]]").doesNotContain(SECRET);
        assertThat(RecordSigning.require(keys).describe())
                .isEqualTo("require, signing with key k1, verifying keys k1").doesNotContain(SECRET);
        assertThat(RecordSigning.require(keys).toString()).doesNotContain(SECRET);
    }
}
